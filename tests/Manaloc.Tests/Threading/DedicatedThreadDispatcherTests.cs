using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using Manaloc.Threading;
using Microsoft.Extensions.Time.Testing;
using static Manaloc.Tests.Threading.DispatcherTestKit;

namespace Manaloc.Tests.Threading;

public sealed class DedicatedThreadDispatcherTests
{
    [Fact]
    public void A_stopped_dispatchers_statistics_snapshot_is_final_and_counts_every_outcome()
    {
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "snapshot", ThreadCount = 2, Capacity = 16 });
        for (int i = 0; i < 99; i++) d.Post(() => { });
        d.Post(() => throw new InvalidOperationException("counted as failed"));
        d.Dispose();
        Assert.False(d.TryPost(() => { }));

        var first = d.GetStatistics();
        Assert.Equal(new DispatcherStatistics
        {
            Queued = 0, Posted = 100, Executed = 100, Failed = 1, Rejected = 1, Dropped = 0, Returned = 0,
            DeepestQueue = first.DeepestQueue, PinnedThreads = 0, VoluntaryYields = first.VoluntaryYields, BusyTime = first.BusyTime,
        }, first);
        Assert.InRange(first.DeepestQueue, 1, 16);
        Assert.True(first.BusyTime > TimeSpan.Zero);
        // Every worker has exited: nothing moves any more, busy time included.
        Assert.Equal(first, d.GetStatistics());
        Assert.Contains("stopped, 2 threads, 0/16 queued, 100 executed", d.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Runs_every_posted_item_on_named_background_threads()
    {
        int ran = 0;
        var names = new ConcurrentDictionary<string, bool>();
        using (var d = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "run-all", ThreadCount = 3, Capacity = 64 }))
        {
            for (int i = 0; i < 10_000; i++)
            {
                d.Post(() =>
                {
                    Interlocked.Increment(ref ran);
                    names[Thread.CurrentThread.Name ?? "?"] = Thread.CurrentThread.IsBackground;
                });
            }
            d.Dispose();
            Assert.Equal(10_000, d.GetStatistics().Executed);
            Assert.Equal(10_000, d.GetStatistics().Posted);
            Assert.Equal(0, d.GetStatistics().Queued);
            Assert.InRange(d.GetStatistics().DeepestQueue, 1, 64);
            Assert.True(d.GetStatistics().BusyTime > TimeSpan.Zero);
            Assert.True(d.Completion.IsCompleted);
            Assert.False(d.IsAcceptingWork);
        }
        Assert.Equal(10_000, ran);
        Assert.All(names, n => Assert.Matches(@"^run-all #[0-2]$", n.Key));
        Assert.All(names, n => Assert.True(n.Value, "worker threads are background threads"));
    }

    [Fact]
    public void Throwing_items_do_not_kill_workers()
    {
        int succeeded = 0, handled = 0;
        using var listener = new FailureListener("throwing-items");
        var d = new DedicatedThreadDispatcher(new DispatcherOptions
        {
            Name = "throwing-items",
            ThreadCount = 2,
            OnItemFailed = e =>
            {
                Assert.IsType<InvalidTimeZoneException>(e);
                if (Interlocked.Increment(ref handled) % 7 == 0) throw new InvalidOperationException("the handler fails too");
            },
        });
        for (int i = 0; i < 1000; i++)
        {
            if (i % 2 == 0) d.Post(() => throw new InvalidTimeZoneException("boom"));
            else d.Post(() => Interlocked.Increment(ref succeeded));
        }
        Assert.Empty(d.Shutdown(Timeout.InfiniteTimeSpan));
        Assert.Equal(500, succeeded);
        Assert.Equal(500, handled);
        Assert.Equal(500, d.GetStatistics().Failed);
        Assert.Equal(1000, d.GetStatistics().Executed);
        Assert.True(listener.Count >= 500, $"DispatcherItemFailed events: {listener.Count}");
    }

    [Fact]
    public void An_exception_whose_Message_throws_does_not_kill_the_worker()
    {
        using var listener = new FailureListener("bad-message"); // enables the event, so the message is formatted
        int handled = 0, ran = 0;
        var d = new DedicatedThreadDispatcher(new DispatcherOptions
        {
            Name = "bad-message",
            ThreadCount = 1,
            OnItemFailed = e => Interlocked.Increment(ref handled),
        });
        d.Post(() => throw new BadMessageException());
        d.Post(() => Interlocked.Increment(ref ran));
        Assert.Empty(d.Shutdown(Timeout.InfiniteTimeSpan));
        Assert.Equal(1, ran); // the worker survived the first item
        Assert.Equal(1, handled);
        Assert.Equal(1, d.GetStatistics().Failed);
        Assert.Equal(2, d.GetStatistics().Executed);
        Assert.Equal(1, listener.Count);
    }

    private sealed class BadMessageException : Exception
    {
        public override string Message => throw new FormatException("Message getter throws");
    }

    [Fact]
    public void Block_mode_blocks_the_producer_until_there_is_room()
    {
        using var gate = new ManualResetEventSlim();
        int ran = 0;
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 4 });
        BlockWorkers(d, gate);
        for (int i = 0; i < 4; i++) d.Post(() => Interlocked.Increment(ref ran));
        Assert.False(d.TryPost(() => { }));
        var blocked = Task.Run(() => d.Post(() => Interlocked.Increment(ref ran)));
        var blockedAsync = d.PostAsync(() => Interlocked.Increment(ref ran)).AsTask();
        Thread.Sleep(100); // absence check: a broken Block mode would have returned by now
        Assert.False(blocked.IsCompleted);
        Assert.False(blockedAsync.IsCompleted);
        gate.Set();
        Await(blocked, "the blocked Post");
        Await(blockedAsync, "the blocked PostAsync");
        d.Dispose();
        Assert.Equal(6, ran);
        Assert.Equal(1, d.GetStatistics().Rejected);
        Assert.Equal(4, d.GetStatistics().DeepestQueue);
    }

    [Fact]
    public void Block_mode_lets_a_blocked_producer_take_a_free_slot_above_the_resume_mark()
    {
        // Capacity 32, one worker: the resume mark is 30 queued. The worker's item waits for the
        // blocked Post to return; it takes one slot's worth off a full queue (31 left), so a
        // producer that waited only for the mark would deadlock with it (the item's wait is the
        // watchdog). The producer's periodic re-check takes the free slot.
        using var gate = new ManualResetEventSlim();
        using var postReturned = new ManualResetEventSlim();
        bool sawPostReturn = false;
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 32 });
        BlockWorkers(d, gate);
        d.Post(() => sawPostReturn = postReturned.Wait(Watchdog));
        for (int i = 1; i < 32; i++) d.Post(() => { });
        Assert.Equal(32, d.GetStatistics().Queued);
        var blocked = StartBlockedPost(d, () =>
        {
            d.Post(() => { });
            postReturned.Set();
        });
        gate.Set();
        Await(blocked, "the blocked Post once a slot is free");
        d.Dispose();
        Assert.True(sawPostReturn, "the worker's item saw the blocked Post return (no deadlock)");
        Assert.Equal(34, d.GetStatistics().Executed);
    }

    [Fact]
    public void Block_mode_lets_an_awaiting_producer_take_a_free_slot_above_the_resume_mark()
    {
        using var gate = new ManualResetEventSlim();
        using var postReturned = new ManualResetEventSlim();
        bool sawPostReturn = false;
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 32 });
        BlockWorkers(d, gate);
        d.Post(() => sawPostReturn = postReturned.Wait(Watchdog));
        for (int i = 1; i < 32; i++) d.Post(() => { });
        var waiting = d.PostAsync(() => { }).AsTask();
        WaitUntil(() => d.WaitingProducerCount == 1, "PostAsync waiting for room");
        Assert.False(waiting.IsCompleted);
        gate.Set();
        Await(waiting, "the awaiting PostAsync once a slot is free");
        postReturned.Set();
        d.Dispose();
        Assert.True(sawPostReturn, "the worker's item saw the PostAsync complete (no deadlock)");
        Assert.Equal(34, d.GetStatistics().Executed);
    }

    [Fact]
    public void Block_mode_resumes_blocked_producers_once_the_queue_is_down_to_the_resume_mark()
    {
        // Capacity 64, two workers held at a gate: the resume mark is 60 queued. Two producers block
        // on the full queue; opening the gate drains it, and both complete and leave the wait.
        using var gate = new ManualResetEventSlim();
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 2, Capacity = 64 });
        BlockWorkers(d, gate);
        for (int i = 0; i < 64; i++) d.Post(() => { });
        var first = StartBlockedPost(d, () => d.Post(() => { }));
        var second = StartBlockedPost(d, () => d.Post(() => { }));
        Assert.Equal(2, d.WaitingProducerCount);
        gate.Set();
        Await(first, "the first blocked Post");
        Await(second, "the second blocked Post");
        Assert.Equal(0, d.WaitingProducerCount);
        d.Dispose();
        Assert.Equal(2 + 64 + 2, d.GetStatistics().Executed);
    }

    [Fact]
    public void A_busy_worker_yields_its_processor_now_and_then()
    {
        // One worker runs 400 items of at least 25 µs each back to back (the gate holds it until
        // they are all queued): 10 ms or more of continuous work, a hundred yield intervals.
        using var gate = new ManualResetEventSlim();
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 512 });
        BlockWorkers(d, gate);
        long before = d.GetStatistics().VoluntaryYields;
        for (int i = 0; i < 400; i++)
        {
            d.Post(static () =>
            {
                long start = System.Diagnostics.Stopwatch.GetTimestamp();
                while (System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalMicroseconds < 25) Thread.SpinWait(10);
            });
        }
        gate.Set();
        d.Dispose();
        Assert.Equal(401, d.GetStatistics().Executed);
        Assert.True(d.GetStatistics().VoluntaryYields > before, "a worker busy for 10 ms yielded at least once");
    }

    [Fact]
    public void FailFast_mode_refuses_when_full()
    {
        using var gate = new ManualResetEventSlim();
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 2, FullMode = FullQueueMode.FailFast });
        BlockWorkers(d, gate);
        d.Post(() => { });
        Assert.True(d.TryPost(() => { }));
        Assert.False(d.TryPost(() => { }));
        var e = Assert.Throws<InvalidOperationException>(() => d.Post(() => { }));
        Assert.Contains("full", e.Message);
        var async = d.PostAsync(() => { });
        Assert.True(async.IsFaulted);
        Assert.Throws<InvalidOperationException>(() => async.GetAwaiter().GetResult());
        Assert.Equal(3, d.GetStatistics().Rejected);
        gate.Set();
        Assert.Empty(d.Shutdown(Timeout.InfiniteTimeSpan));
        Assert.Equal(3, d.GetStatistics().Executed);
    }

    [Fact]
    public void DropOldest_mode_hands_the_oldest_items_to_the_callback()
    {
        using var gate = new ManualResetEventSlim();
        var dropped = new ConcurrentQueue<Action>();
        var ran = new ConcurrentQueue<int>();
        var items = Enumerable.Range(1, 6).Select(i => (Action)(() => ran.Enqueue(i))).ToArray();
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions
        {
            ThreadCount = 1, Capacity = 4, FullMode = FullQueueMode.DropOldest, OnItemDropped = dropped.Enqueue,
        });
        BlockWorkers(d, gate);
        for (int i = 0; i < 4; i++) d.Post(items[i]);
        d.Post(items[4]);
        Assert.True(d.TryPost(items[5]));
        Assert.Equal([items[0], items[1]], dropped.ToArray());
        Assert.Equal(2, d.GetStatistics().Dropped);
        gate.Set();
        d.Dispose();
        Assert.Equal([3, 4, 5, 6], ran.ToArray());
    }

    [Fact]
    public void DropOldest_needs_a_callback()
    {
        var e = Assert.Throws<ArgumentException>(() => new DedicatedThreadDispatcher(new DispatcherOptions { FullMode = FullQueueMode.DropOldest }));
        Assert.Contains("OnItemDropped", e.Message);
    }

    [Fact]
    public void PostAsync_cancelled_while_waiting_does_not_queue_the_item()
    {
        using var gate = new ManualResetEventSlim();
        bool ran = false;
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 1 });
        BlockWorkers(d, gate);
        d.Post(() => { });
        using var cancel = new CancellationTokenSource();
        var waiting = d.PostAsync(() => ran = true, cancel.Token).AsTask();
        Assert.False(waiting.IsCompleted);
        cancel.Cancel();
        Assert.ThrowsAny<OperationCanceledException>(() => waiting.GetAwaiter().GetResult());
        gate.Set();
        d.Dispose();
        Assert.False(ran);
        Assert.Equal(2, d.GetStatistics().Executed);
    }

    [Fact]
    public void Shutdown_deadline_on_a_fake_clock_returns_the_items_that_did_not_run()
    {
        var clock = new FakeTimeProvider();
        using var gate = new ManualResetEventSlim();
        var ran = new bool[3];
        var items = Enumerable.Range(0, 3).Select(i => (Action)(() => ran[i] = true)).ToArray();
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 16, TimeProvider = clock });
        BlockWorkers(d, gate);
        foreach (var item in items) d.Post(item);

        var shutdown = d.ShutdownAsync(TimeSpan.FromSeconds(5));
        Assert.False(d.IsAcceptingWork);
        Assert.False(d.TryPost(() => { }));
        Assert.Throws<InvalidOperationException>(() => d.Post(() => { }));
        Assert.False(shutdown.IsCompleted);
        clock.Advance(TimeSpan.FromSeconds(4.9));
        Assert.False(shutdown.IsCompleted); // the deadline has not passed: the shutdown still waits for the drain
        Assert.Same(shutdown, d.ShutdownAsync(TimeSpan.Zero));
        clock.Advance(TimeSpan.FromSeconds(0.1));
        var notRun = Await(shutdown, "the shutdown after its deadline");

        Assert.Equal(items, notRun);
        Assert.Equal(3, d.GetStatistics().Returned);
        gate.Set();
        Await(d.Completion, "the workers' exit");
        Assert.Equal([false, false, false], ran);
        Assert.Equal(1, d.GetStatistics().Executed);
        Assert.Equal(2, d.GetStatistics().Rejected);
    }

    [Fact]
    public void Busy_time_follows_the_fake_clock_while_a_worker_is_awake()
    {
        var clock = new FakeTimeProvider();
        using var gate = new ManualResetEventSlim();
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, TimeProvider = clock });
        BlockWorkers(d, gate);
        Assert.Equal(TimeSpan.Zero, d.GetStatistics().BusyTime);
        clock.Advance(TimeSpan.FromSeconds(5));
        Assert.Equal(TimeSpan.FromSeconds(5), d.GetStatistics().BusyTime); // the worker is awake (running the blocking item) the whole time
        gate.Set();
        d.Dispose();
        Assert.Equal(TimeSpan.FromSeconds(5), d.GetStatistics().BusyTime); // asleep or gone: no more time accrues
        clock.Advance(TimeSpan.FromSeconds(3));
        Assert.Equal(TimeSpan.FromSeconds(5), d.GetStatistics().BusyTime);
    }

    [Fact]
    public void Busy_time_never_goes_backwards_when_a_reader_overlaps_the_end_of_an_interval()
    {
        // The worker reads the clock to end its awake interval, then stalls (here: inside that very
        // read) before publishing; a reader in between counts the open interval up to its own,
        // later clock reading. The published total must not then read lower.
        var clock = new GatedClock();
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, TimeProvider = clock });
        d.Post(clock.StallNextReadOnThisThread); // on the worker: its next clock read is EndBusy's
        Assert.True(clock.Stalled.Wait(Watchdog), "watchdog: the worker ending its awake interval");
        clock.Advance(TimeSpan.FromSeconds(5));
        var during = d.GetStatistics().BusyTime;
        clock.Release.Set();
        d.Dispose();
        var after = d.GetStatistics().BusyTime;
        Assert.True(after >= during, $"BusyTime went backwards: {during} then {after}");
    }

    /// <summary>A manual clock that can stall one thread inside its next read, after taking the timestamp.</summary>
    private sealed class GatedClock : TimeProvider
    {
        [ThreadStatic]
        private static bool t_stallNext;
        private long _now = TimeSpan.TicksPerDay;

        public ManualResetEventSlim Stalled { get; } = new();
        public ManualResetEventSlim Release { get; } = new();

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp()
        {
            long now = Interlocked.Read(ref _now);
            if (t_stallNext)
            {
                t_stallNext = false;
                Stalled.Set();
                Release.Wait(Watchdog);
            }
            return now;
        }

        public void StallNextReadOnThisThread() => t_stallNext = true;

        public void Advance(TimeSpan by) => Interlocked.Add(ref _now, by.Ticks);
    }

    [Fact]
    public void Shutdown_without_deadline_runs_everything_and_wakes_blocked_producers()
    {
        using var gate = new ManualResetEventSlim();
        int ran = 0;
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 2, Capacity = 2 });
        BlockWorkers(d, gate);
        d.Post(() => Interlocked.Increment(ref ran));
        d.Post(() => Interlocked.Increment(ref ran));
        var blocked = StartBlockedPost(d, () => d.Post(() => Interlocked.Increment(ref ran))); // returns once really blocked
        var shutdown = d.ShutdownAsync(Timeout.InfiniteTimeSpan);
        var e = Assert.Throws<AggregateException>(() => blocked.Wait(Watchdog));
        Assert.IsType<InvalidOperationException>(e.InnerException);
        Assert.Contains("shutting down", e.InnerException!.Message);
        gate.Set();
        Assert.Empty(Await(shutdown, "the infinite shutdown"));
        Assert.Equal(2, ran);
    }

    [Fact]
    public void Shutdown_with_a_timeout_beyond_the_timer_range_waits_like_infinite()
    {
        var clock = new FakeTimeProvider();
        using var gate = new ManualResetEventSlim();
        int ran = 0;
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 8, TimeProvider = clock });
        BlockWorkers(d, gate); // the workers are busy, so the shutdown really reaches its deadline wait
        d.Post(() => Interlocked.Increment(ref ran));
        var shutdown = d.ShutdownAsync(TimeSpan.FromDays(60)); // Task.Delay refuses more than ~49.7 days
        Assert.False(shutdown.IsCompleted);
        Assert.Same(shutdown, d.ShutdownAsync(TimeSpan.MaxValue));
        clock.Advance(TimeSpan.FromDays(61)); // "infinite": no deadline passes on the fake clock either
        Assert.False(shutdown.IsCompleted);
        gate.Set();
        Assert.Empty(Await(shutdown, "the shutdown with a 60-day timeout"));
        Assert.Equal(1, ran);
        Assert.Empty(d.Shutdown(TimeSpan.MaxValue)); // later calls return the same, successful task
        d.Dispose();
    }

    [Fact]
    public void Shutdown_from_a_worker_is_refused()
    {
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1 });
        var result = new TaskCompletionSource<Exception?>();
        d.Post(() =>
        {
            try { d.Shutdown(TimeSpan.Zero); result.SetResult(null); }
            catch (Exception e) { result.SetResult(e); }
        });
        Assert.IsType<InvalidOperationException>(Await(result.Task, "the item"));
        d.Dispose();
    }

    [Fact]
    public void A_worker_posting_to_its_own_full_queue_gets_an_exception_not_a_deadlock()
    {
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 1 });
        var result = new TaskCompletionSource<Exception?>();
        d.Post(() =>
        {
            try
            {
                d.Post(() => { }); // fills the queue
                d.Post(() => { }); // would wait for this very worker
                result.SetResult(null);
            }
            catch (Exception e)
            {
                result.SetResult(e);
            }
        });
        var error = Await(result.Task, "the self-posting item");
        Assert.IsType<InvalidOperationException>(error);
        Assert.Contains("deadlock", error!.Message);
        d.Dispose();
        Assert.Equal(2, d.GetStatistics().Executed);
        Assert.Equal(1, d.GetStatistics().Rejected);
    }

    [Fact]
    public void Bad_arguments_are_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DedicatedThreadDispatcher(new DispatcherOptions { Capacity = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DedicatedThreadDispatcher(new DispatcherOptions { FullMode = (FullQueueMode)9 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DedicatedThreadDispatcher(new DispatcherOptions { ProcessorAffinity = [-1] }));
        Assert.Throws<ArgumentException>(() => new DedicatedThreadDispatcher(new DispatcherOptions { Name = " " }));
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1 });
        Assert.Throws<ArgumentNullException>(() => d.Post(null!));
        Assert.Throws<ArgumentNullException>(() => d.TryPost(null!));
        Assert.Throws<ArgumentNullException>(() => { _ = d.PostAsync(null!); });
        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = d.ShutdownAsync(TimeSpan.FromSeconds(-1)); });
    }

    [Fact]
    public void Affinity_is_best_effort()
    {
        int ran = 0;
        using var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 2, ProcessorAffinity = [0] });
        for (int i = 0; i < 100; i++) d.Post(() => Interlocked.Increment(ref ran));
        d.Dispose();
        Assert.Equal(100, ran);
        if (OperatingSystem.IsLinux() && (System.Diagnostics.Process.GetCurrentProcess().ProcessorAffinity & 1) != 0)
        {
            Assert.Equal(2, d.GetStatistics().PinnedThreads);
        }
        Assert.InRange(d.GetStatistics().PinnedThreads, 0, 2);
    }

    [Fact]
    public void Dispatchers_sharing_a_name_are_one_series_summed_with_the_deepest_queue_their_largest()
    {
        string name = "twin-" + Guid.NewGuid().ToString("N");
        var seen = new ConcurrentDictionary<string, List<double>>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Manaloc.Threading") l.EnableMeasurementEvents(instrument);
        };
        void OnMeasurement(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            foreach (var tag in tags)
            {
                if (tag.Key == "name" && Equals(tag.Value, name)) seen.GetOrAdd(instrument.Name, _ => []).Add(value);
            }
        }
        listener.SetMeasurementEventCallback<long>((i, v, t, _) => OnMeasurement(i, v, t));
        listener.SetMeasurementEventCallback<double>((i, v, t, _) => OnMeasurement(i, v, t));
        listener.Start();

        using var gate = new ManualResetEventSlim();
        var first = new DedicatedThreadDispatcher(new DispatcherOptions { Name = name, ThreadCount = 1, Capacity = 8 });
        var second = new DedicatedThreadDispatcher(new DispatcherOptions { Name = name, ThreadCount = 1, Capacity = 8 });
        BlockWorkers(first, gate);
        BlockWorkers(second, gate);
        for (int i = 0; i < 3; i++) first.TryPost(() => { });
        for (int i = 0; i < 8; i++) second.TryPost(() => { }); // fills its queue: its deepest is then exact
        long firstDeepest = first.GetStatistics().DeepestQueue, secondDeepest = second.GetStatistics().DeepestQueue;
        listener.RecordObservableInstruments();
        gate.Set();
        first.Dispose();
        second.Dispose();

        // One measurement per instrument for the shared tag set (an exporter keeps one of repeated tag sets).
        Assert.All(seen.Values, values => Assert.Single(values));
        Assert.Equal(13, seen["manaloc.dispatcher.posted"][0]); // each dispatcher's blocking item and its queued ones
        Assert.Equal(11, seen["manaloc.dispatcher.queued"][0]);
        Assert.Equal(8, secondDeepest);
        Assert.InRange(firstDeepest, 1, 3);
        Assert.Equal(8, seen["manaloc.dispatcher.deepest_queue"][0]); // the larger of the two, not their sum
    }

    [Fact]
    public void Metrics_report_each_dispatcher_by_name()
    {
        string name = "metrics-" + Guid.NewGuid().ToString("N");
        var seen = new ConcurrentDictionary<string, double>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Manaloc.Threading") l.EnableMeasurementEvents(instrument);
        };
        void OnMeasurement(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            // The library's one tag scheme: name = the options' Name, kind = "dispatcher".
            bool named = false, kind = false;
            foreach (var tag in tags)
            {
                named |= tag.Key == "name" && Equals(tag.Value, name);
                kind |= tag.Key == "kind" && Equals(tag.Value, "dispatcher");
            }
            if (named && kind) seen[instrument.Name] = value;
        }
        listener.SetMeasurementEventCallback<long>((i, v, t, _) => OnMeasurement(i, v, t));
        listener.SetMeasurementEventCallback<double>((i, v, t, _) => OnMeasurement(i, v, t));
        listener.Start();

        using var gate = new ManualResetEventSlim();
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { Name = name, ThreadCount = 1, Capacity = 8, FullMode = FullQueueMode.FailFast });
        BlockWorkers(d, gate);
        for (int i = 0; i < 10; i++) d.TryPost(() => { });
        listener.RecordObservableInstruments();
        Assert.Equal(9, seen["manaloc.dispatcher.posted"]);
        Assert.Equal(8, seen["manaloc.dispatcher.queued"]);
        Assert.Equal(2, seen["manaloc.dispatcher.rejected"]);
        Assert.Equal(8, seen["manaloc.dispatcher.deepest_queue"]);
        Assert.True(seen.ContainsKey("manaloc.dispatcher.busy_time"));
        gate.Set();
        d.Dispose();
        Assert.Equal(9, d.GetStatistics().Executed);

        seen.Clear();
        listener.RecordObservableInstruments();
        Assert.Empty(seen); // a shut-down dispatcher no longer reports
    }

    [Fact]
    public void Dispose_from_a_worker_begins_the_shutdown_without_waiting_for_itself()
    {
        int ran = 0;
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1 });
        using var gate = new ManualResetEventSlim();
        d.Post(() =>
        {
            gate.Wait();
            d.Dispose();
            Interlocked.Increment(ref ran);
        });
        d.Post(() => Interlocked.Increment(ref ran));
        gate.Set();
        Await(d.Completion, "the workers' exit after a Dispose from a worker");
        Assert.Equal(2, ran); // the queued item still ran: Dispose drains
        Assert.False(d.TryPost(() => { }));
    }

    /// <summary>Counts DispatcherItemFailed events of one dispatcher.</summary>
    private sealed class FailureListener(string dispatcher) : EventListener
    {
        private int _count;
        public int Count => Volatile.Read(ref _count);

        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == "Manaloc") EnableEvents(source, EventLevel.Warning);
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventId == 7 && e.Payload is { Count: > 0 } p && Equals(p[0], dispatcher)) Interlocked.Increment(ref _count);
        }
    }
}
