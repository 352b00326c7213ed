using Manaloc.Threading;

namespace Manaloc.Lab.Soak;

internal sealed partial class SoakRun
{
    /// <summary>One dispatcher's life: items accepted, run and handed back at shutdown.</summary>
    private sealed class DispatcherCycle(DedicatedThreadDispatcher dispatcher)
    {
        public readonly DedicatedThreadDispatcher Dispatcher = dispatcher;
        public long Accepted, Ran, Posting;
        public Action? Item;
    }

    private void Post()
    {
        var cycle = Volatile.Read(ref _cycle);
        if (cycle is null) return;
        Interlocked.Increment(ref cycle.Posting); // the checker waits for posts in flight before it counts
        try
        {
            if (cycle.Dispatcher.TryPost(cycle.Item!)) Interlocked.Increment(ref cycle.Accepted);
            else Interlocked.Increment(ref Counters.PostsRefused);
        }
        catch (InvalidOperationException)
        {
            Interlocked.Increment(ref Counters.PostsRefused); // shut down between our read of the cycle and the post
        }
        finally
        {
            Interlocked.Decrement(ref cycle.Posting);
        }
    }

    /// <summary>Creates a dispatcher, lets the load threads feed it for a while, shuts it down and checks every accepted item ran or came back once.</summary>
    private void DispatcherCycles()
    {
        var random = new Random(12345);
        while (!_stop)
        {
            Quiet.Check(); // parks with no dispatcher alive: none of its objects or threads are in the measured heap
            var dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "soak", ThreadCount = 2, Capacity = 256, FullMode = FullQueueMode.FailFast });
            var cycle = new DispatcherCycle(dispatcher);
            cycle.Item = () => Interlocked.Increment(ref cycle.Ran);
            Volatile.Write(ref _cycle, cycle);
            Quiet.Nap(TimeSpan.FromMilliseconds(random.Next(10, 200))); // cut short by a pause: shut down, then park
            var handedBack = dispatcher.Shutdown(TimeSpan.FromMilliseconds(random.Next(2) == 0 ? 0 : 20));
            Volatile.Write(ref _cycle, null);
            if (!WaitWithin(timeout => dispatcher.Completion.Wait(timeout), HangLimit, DispatcherStopWait))
            {
                Violation($"dispatcher: workers did not stop within {HangLimit.TotalSeconds:0} s of the shutdown while the process ran");
            }
            while (Volatile.Read(ref cycle.Posting) != 0) Thread.Yield();
            long accepted = Volatile.Read(ref cycle.Accepted), ran = Volatile.Read(ref cycle.Ran);
            if (ran + handedBack.Count != accepted)
            {
                Violation($"dispatcher: {accepted} accepted, but {ran} ran and {handedBack.Count} were handed back");
            }
            dispatcher.Dispose();
            Interlocked.Increment(ref Counters.DispatcherCycles);
            Interlocked.Add(ref Counters.ItemsAccepted, accepted);
            Interlocked.Add(ref Counters.ItemsRan, ran);
            Interlocked.Add(ref Counters.ItemsHandedBack, handedBack.Count);
        }
    }

    /// <summary>Waits with <paramref name="wait"/> up to <paramref name="limit"/>, again after each wait that a stall of the whole process excuses; false on a hang.</summary>
    private bool WaitWithin(Func<TimeSpan, bool> wait, TimeSpan limit, string what)
    {
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        while (!wait(limit))
        {
            if (!Hang.ExcusedByStall(start, what)) return false;
            start = System.Diagnostics.Stopwatch.GetTimestamp();
        }
        return true;
    }

    /// <summary>Stops every thread, drains what is in flight and checks that the counts balance.</summary>
    public void StopAndCheck()
    {
        _stop = true;
        _pingPong.Stop();
        foreach (var t in _threads)
        {
            if (!WaitWithin(t.Join, HangLimit * 2, ThreadEndWait)) Violation($"{t.Name} did not stop within {(HangLimit * 2).TotalSeconds:0} s while the process ran (hang)");
        }
        foreach (var record in _records.TakeAll()) CheckAndDelete(record);
        foreach (var item in _pooled.TakeAll()) GivePooledBack(item);
        foreach (var buffer in _rented.TakeAll()) GiveBufferBack(buffer);

        var c = Counters;
        if (c.RecordsCreated != c.RecordsDeleted) Violation($"records: {c.RecordsCreated} created, {c.RecordsDeleted} deleted");
        long live = _allocator.CountLiveObjects();
        if (live != 0) Violation($"records: the allocator still counts {live} live records after every one was deleted");
        if (c.PoolRents != c.PoolReturns) Violation($"pool: {c.PoolRents} rented, {c.PoolReturns} returned");
        if (c.BufferRents != c.BufferReturns) Violation($"buffers: {c.BufferRents} rented, {c.BufferReturns} returned");
        if (Volatile.Read(ref _readers) != 0 || Volatile.Read(ref _writers) != 0) Violation("lock: holders left inside at the end");
    }
}
