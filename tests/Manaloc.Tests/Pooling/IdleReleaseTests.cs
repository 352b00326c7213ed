using System.Runtime.CompilerServices;
using Manaloc.Pooling;
using Manaloc.Tests.Threading;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Pooling;

/// <summary>
/// A semi-local pool releases what it holds beyond recent demand once it has been idle for
/// <see cref="PoolOptions.ReleaseIdleAfter"/> on its <see cref="TimeProvider"/>: the shared tier, the stacks of
/// exited threads and of live threads gone quiet. A busy pool keeps its objects. Every test runs on a manual
/// clock with gen-2 trimming off, so nothing here waits on time or depends on a GC.
/// </summary>
public sealed class IdleReleaseTests
{
    private static readonly TimeSpan Period = TimeSpan.FromSeconds(1);

    private static SemiLocalPool<PooledThing> NewPool(TimeProvider clock, List<PooledThing>? created = null, string name = "idle") =>
        new(() =>
        {
            var thing = new PooledThing();
            if (created is not null) lock (created) created.Add(thing);
            return thing;
        }, new PoolOptions { Name = name, TrimAfterGen2 = false, ReleaseIdleAfter = Period, TimeProvider = clock, LocalCapacity = 16, BatchSize = 4, MaxRetained = 1000 });

    private static void Burst(SemiLocalPool<PooledThing> pool, int count)
    {
        var held = new PooledThing[count];
        for (int i = 0; i < count; i++) held[i] = pool.Rent();
        foreach (var thing in held) pool.Return(thing);
    }

    [Fact]
    public void A_burst_then_idle_is_released_to_a_tenth_within_one_and_a_half_periods_without_a_GC()
    {
        var clock = new FakeTimeProvider();
        var created = new List<PooledThing>();
        using var pool = NewPool(clock, created);
        Burst(pool, 200);
        long peak = pool.GetStatistics().Retained;
        Assert.Equal(200, peak);

        clock.Advance(Period); // checks at 0.5 and 1 period: each window holds the burst's 200 rents of demand, nothing released
        Assert.Equal(peak, pool.GetStatistics().Retained);
        clock.Advance(Period / 2); // the check at 1.5 sees a whole period without a rent: everything goes, this thread's own (quiet) stack included

        var stats = pool.GetStatistics();
        Assert.True(stats.Retained <= peak / 10, $"retained {stats.Retained} of a peak of {peak}");
        Assert.Equal(0, stats.Retained);
        Assert.Equal(200, stats.Trimmed);
        lock (created) Assert.All(created, t => Assert.True(t.Disposed, $"object {t.Id} was not released"));
    }

    [Fact]
    public void A_busy_pool_keeps_its_objects()
    {
        var clock = new FakeTimeProvider();
        using var pool = NewPool(clock);
        Burst(pool, 64);
        for (int period = 0; period < 5; period++)
        {
            Burst(pool, 64); // as many rents per period as objects retained: the demand covers them all
            clock.Advance(Period);
            Assert.Equal(64, pool.GetStatistics().Retained);
        }
        Assert.Equal(0, pool.GetStatistics().Trimmed);
        Assert.Equal(64, pool.GetStatistics().Creations);
    }

    [Fact]
    public void A_trickle_keeps_the_active_threads_stack_and_releases_the_shared_tier()
    {
        var clock = new FakeTimeProvider();
        using var pool = NewPool(clock);
        Burst(pool, 200); // 16 on this thread's stack, 184 spilled to the shared tier
        clock.Advance(Period);
        Burst(pool, 2); // two rents in the next period: served by this thread's stack
        clock.Advance(Period);

        var stats = pool.GetStatistics();
        Assert.True(stats.Retained is > 0 and <= 16, $"retained {stats.Retained}: the active stack stays, the shared tier goes");
        Assert.Equal(200, stats.Retained + stats.Trimmed);
    }

    [Fact]
    public void The_stack_of_a_finished_thread_is_released()
    {
        var clock = new FakeTimeProvider();
        using var pool = NewPool(clock);
        var worker = new Thread(() => Burst(pool, 12));
        worker.Start();
        Assert.True(worker.Join(TimeSpan.FromSeconds(30)), "worker hung");
        Assert.Equal(12, pool.GetStatistics().Retained);

        clock.Advance(Period);
        clock.Advance(Period);

        Assert.Equal(0, pool.GetStatistics().Retained);
        Assert.Equal(12, pool.GetStatistics().Trimmed);
        Assert.Equal(0, pool.RegisteredThreadStacks);
    }

    [Fact]
    public void The_stack_of_a_live_quiet_thread_is_released_and_the_thread_reuses_the_pool_afterwards()
    {
        var clock = new FakeTimeProvider();
        var created = new List<PooledThing>();
        using var pool = NewPool(clock, created);
        using var filled = new ManualResetEventSlim();
        using var resume = new ManualResetEventSlim();
        Exception? failure = null;
        var worker = new Thread(() =>
        {
            try
            {
                Burst(pool, 12); // all 12 stay on this thread's stack (capacity 16)
                filled.Set();
                resume.Wait();
                // The stack was drained from another thread while this one slept: rents must create or
                // refill, never hand out a released (disposed) object or a null.
                for (int round = 0; round < 3; round++)
                {
                    var held = Enumerable.Range(0, 20).Select(_ => pool.Rent()).ToArray();
                    Assert.All(held, t => Assert.False(t.Disposed, $"object {t.Id} was handed out after its release"));
                    Assert.Equal(20, held.Distinct().Count());
                    foreach (var t in held) pool.Return(t);
                }
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        worker.Start();
        Assert.True(filled.Wait(TimeSpan.FromSeconds(30)), "worker did not fill its stack");
        clock.Advance(Period);
        clock.Advance(Period);
        Assert.Equal(0, pool.GetStatistics().Retained);
        lock (created) Assert.Equal(12, created.Count(t => t.Disposed));

        resume.Set();
        Assert.True(worker.Join(TimeSpan.FromSeconds(30)), "worker hung");
        Assert.Null(failure);
        var stats = pool.GetStatistics();
        lock (created)
        {
            // Every object ever created is either idle in the pool or was released exactly once (Dispose counted once each).
            Assert.Equal(created.Count, stats.Retained + stats.Trimmed + stats.Drops);
            Assert.Equal(created.Count(t => t.Disposed), stats.Trimmed + stats.Drops);
        }
    }

    /// <summary>
    /// The drain of a quiet thread's stack races with its owner waking up: the owner rents and returns in
    /// bursts with pauses, while this thread runs release passes that drain its stack whenever it sat out
    /// a pass. If the hand-shake were broken (no barrier, a plain store where an exchange is needed, a drain
    /// of a reopened stack), an object would be handed out twice, handed out after its release (disposed),
    /// handed out as null, or counted wrong.
    /// </summary>
    [Fact]
    public void Draining_a_quiet_stack_races_safely_with_its_owner_waking_up()
    {
        var created = new List<PooledThing>();
        using var pool = new SemiLocalPool<PooledThing>(() =>
        {
            var thing = new PooledThing();
            lock (created) created.Add(thing);
            return thing;
        }, new PoolOptions { Name = "idle-race", TrimAfterGen2 = false, ReleaseIdleAfter = Timeout.InfiniteTimeSpan, LocalCapacity = 8, BatchSize = 2, MaxRetained = 64 });
        int stop = 0;
        long released = 0;
        var releaser = new Thread(() =>
        {
            while (Volatile.Read(ref stop) == 0)
            {
                released += pool.ReleaseIdle(keep: 0);
                Thread.Yield();
            }
        });
        releaser.Start();
        try
        {
            Watchdog.Run(2, (t, progress) =>
            {
                var held = new List<PooledThing>();
                var random = new Random(t + 1);
                for (int i = 0; i < 20_000; i++)
                {
                    for (int k = random.Next(1, 6); k > 0; k--)
                    {
                        var thing = pool.Rent();
                        Assert.NotNull(thing);
                        Assert.False(thing.Disposed, $"object {thing.Id} was handed out after its release");
                        Assert.Equal(0, Interlocked.Exchange(ref thing.Out, 1)); // handed out twice
                        held.Add(thing);
                    }
                    foreach (var thing in held)
                    {
                        Volatile.Write(ref thing.Out, 0);
                        pool.Return(thing);
                    }
                    held.Clear();
                    if (random.Next(8) == 0) Thread.Sleep(random.Next(2)); // sit out release passes now and then: the stack looks quiet
                    progress();
                }
            });
        }
        finally
        {
            Volatile.Write(ref stop, 1);
            Assert.True(releaser.Join(TimeSpan.FromSeconds(30)), "releaser hung");
        }
        var stats = pool.GetStatistics();
        lock (created)
        {
            Assert.Equal(created.Count, stats.Retained + stats.Trimmed + stats.Drops);
            Assert.Equal(created.Count(t => t.Disposed), stats.Trimmed + stats.Drops);
            Assert.All(created.Where(t => t.Disposed), t => Assert.Equal(0, Volatile.Read(ref t.Out)));
        }
        Assert.True(released > 0, "no release pass ever drained anything: the race was not exercised");
    }

    /// <summary>
    /// The owner wakes up exactly between the release's close and its drain: it reopens its stack and fills
    /// it again. The drain must leave the reopened stack alone (it no longer knows the owner's count): had
    /// it taken those objects, the owner's next rents would get nulls or released objects.
    /// </summary>
    [Fact]
    public void A_stack_its_owner_reopened_before_the_drain_is_left_alone()
    {
        var created = new List<PooledThing>();
        using var pool = new SemiLocalPool<PooledThing>(() =>
        {
            var thing = new PooledThing();
            lock (created) created.Add(thing);
            return thing;
        }, new PoolOptions { Name = "idle-reopen", TrimAfterGen2 = false, ReleaseIdleAfter = Timeout.InfiniteTimeSpan, LocalCapacity = 16, BatchSize = 4 });
        using var step = new SemaphoreSlim(0);
        using var done = new SemaphoreSlim(0);
        Exception? failure = null;
        var owner = new Thread(() =>
        {
            try
            {
                Burst(pool, 6);
                done.Release();
                step.Wait(); // woken between the close and the drain
                Burst(pool, 6); // reopens the stack on its slow path and fills it again
                done.Release();
                step.Wait(); // after the release pass
                var held = Enumerable.Range(0, 6).Select(_ => pool.Rent()).ToArray();
                Assert.All(held, t => Assert.False(t is null || t.Disposed, "the drain took objects from a reopened stack"));
                foreach (var t in held) pool.Return(t);
            }
            catch (Exception e)
            {
                failure = e;
            }
            finally
            {
                done.Release();
            }
        });
        owner.Start();
        Assert.True(done.Wait(TimeSpan.FromSeconds(30)), "owner did not fill its stack");
        pool.ReleaseIdle(keep: 0); // two passes note the owner's rents (a window of two checks)
        pool.ReleaseIdle(keep: 0);
        pool.BetweenCloseAndDrain = () =>
        {
            step.Release();
            Assert.True(done.Wait(TimeSpan.FromSeconds(30)), "owner did not refill its stack");
        };
        pool.ReleaseIdle(keep: 0); // the owner is quiet: its stack is closed, then the owner reopens it, then the drain runs
        pool.BetweenCloseAndDrain = null;
        step.Release();
        Assert.True(done.Wait(TimeSpan.FromSeconds(30)), "owner hung");
        Assert.True(owner.Join(TimeSpan.FromSeconds(30)), "owner hung");
        Assert.Null(failure);
        var stats = pool.GetStatistics();
        lock (created) Assert.Equal(created.Count, stats.Retained + stats.Trimmed + stats.Drops);
    }

    [Fact]
    public void A_categorized_pool_releases_each_category()
    {
        var clock = new FakeTimeProvider();
        using var pool = new CategorizedPool<PooledThing>(() => new PooledThing(),
            new PoolOptions { Name = "idle-categories", TrimAfterGen2 = false, ReleaseIdleAfter = Period, TimeProvider = clock });
        foreach (string category in new[] { "a", "b" })
        {
            var held = Enumerable.Range(0, 10).Select(_ => pool.Rent(category)).ToArray();
            foreach (var t in held) pool.Return(category, t);
        }
        Assert.Equal(20, pool.GetStatistics().Retained);
        clock.Advance(Period);
        clock.Advance(Period);
        Assert.Equal(0, pool.GetStatistics().Retained);
        Assert.Equal(20, pool.GetStatistics().Trimmed);
    }

    [Fact]
    public void Dispose_stops_the_timer_and_an_infinite_period_starts_none()
    {
        var clock = new TimerCountingClock();
        var pool = NewPool(clock);
        Assert.Equal(1, clock.ActiveTimers);
        pool.Dispose();
        Assert.Equal(0, clock.ActiveTimers);
        clock.Advance(Period * 3); // a disposed pool's tick would find nothing anyway; the timer is gone

        using var off = new SemiLocalPool<PooledThing>(() => new PooledThing(), new PoolOptions { ReleaseIdleAfter = Timeout.InfiniteTimeSpan, TimeProvider = clock });
        Assert.Equal(0, clock.ActiveTimers);
    }

    [Fact]
    public void The_timer_does_not_keep_a_dropped_pool_alive_and_stops_once_it_is_collected()
    {
        var clock = new TimerCountingClock();
        var weak = DropPool(clock);
        for (int i = 0; i < 3 && weak.IsAlive; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.False(weak.IsAlive, "the idle-release timer kept the pool alive");
        clock.Advance(Period); // the first tick after the collection finds no pool and stops its timer
        Assert.Equal(0, clock.ActiveTimers);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference DropPool(TimerCountingClock clock)
    {
        var pool = NewPool(clock, name: "idle-dropped");
        Burst(pool, 4);
        Assert.Equal(1, clock.ActiveTimers);
        return new WeakReference(pool);
    }

    public static TheoryData<TimeSpan> BadPeriods() => new() { TimeSpan.Zero, TimeSpan.FromMilliseconds(-5), TimeSpan.FromMilliseconds(0.5), TimeSpan.FromDays(60) };

    [Theory]
    [MemberData(nameof(BadPeriods))]
    public void A_bad_period_is_refused_naming_the_option(TimeSpan period)
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => new SemiLocalPool<PooledThing>(() => new PooledThing(), new PoolOptions { ReleaseIdleAfter = period }));
        Assert.Equal(nameof(PoolOptions.ReleaseIdleAfter), e.ParamName);
        Assert.Contains("ReleaseIdleAfter", e.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => new CategorizedPool<PooledThing>(() => new PooledThing(), new PoolOptions { ReleaseIdleAfter = period }));
    }

    [Fact]
    public void A_null_clock_is_refused_naming_the_option()
    {
        var e = Assert.ThrowsAny<ArgumentException>(() => new SemiLocalPool<PooledThing>(() => new PooledThing(), new PoolOptions { TimeProvider = null! }));
        Assert.Equal(nameof(PoolOptions.TimeProvider), e.ParamName);
    }
}
