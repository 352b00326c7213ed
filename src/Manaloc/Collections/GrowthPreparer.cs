using Manaloc.Platform;

namespace Manaloc.Collections;

/// <summary>
/// One background thread per process that runs the maps' growth work off the writer's thread (making the next huge-page
/// block ready: <see cref="NativeHashTable{TKey, TValue}"/>'s spare block), started by the first request.
/// </summary>
/// <remarks>
/// <para>Why not the thread pool: an insert that queued a pool work item paid for the pool's bookkeeping and for two
/// threads' wake-ups (a worker's, and the pool's gate thread's after an idle spell), 50-170 µs of the writer's own time
/// on a virtual machine, where one futex wake costs 15-40 µs; and the worker, woken on the writer's core, preempted it
/// while it faulted in 2 MiB. Here a request wakes at most one thread, and that thread runs in the batch scheduling class
/// (<see cref="LinuxNative.MakeCurrentThreadBatch"/>), so its wake-up does not take the writer's core.</para>
/// <para>Ordering: requests and the preparer's decision to sleep meet under <see cref="s_gate"/>: a request either finds
/// the preparer awake (it will see the request before it next decides to sleep, under the same lock) or finds it about to
/// wait and releases the semaphore (a count the wait then takes: a release before the wait is not lost). So every request
/// is run. Nothing is allocated per request: the two lists swap and keep their capacity.</para>
/// <para>The thread is a background thread and lives with the process, like the pool's; if it cannot be started, requests
/// are dropped and the writer maps its next block itself (the path for a block not ready in time).</para>
/// </remarks>
internal static class GrowthPreparer
{
    private static readonly object s_gate = new();
    private static readonly SemaphoreSlim s_wake = new(0);
    private static List<IThreadPoolWorkItem> s_pending = new(8);
    private static List<IThreadPoolWorkItem> s_running = new(8);
    private static bool s_sleeping;
    private static bool s_started;
    private static bool s_unavailable;

    /// <summary>Runs <paramref name="work"/> on the preparer's thread, soon; false when no preparer thread can run it (the caller does without).</summary>
    public static bool Request(IThreadPoolWorkItem work)
    {
        bool wake;
        lock (s_gate)
        {
            if (s_unavailable) return false;
            if (!s_started && !Start()) return false;
            try
            {
                s_pending.Add(work); // allocates only past the lists' capacity: more tables waiting at once than ever before
            }
            catch (OutOfMemoryException)
            {
                return false;
            }
            wake = s_sleeping;
            s_sleeping = false;
        }
        if (wake) s_wake.Release();
        return true;
    }

    /// <summary>Under <see cref="s_gate"/>: starts the thread (once per process).</summary>
    private static bool Start()
    {
        try
        {
            var thread = new Thread(Run, maxStackSize: 256 * 1024) { IsBackground = true, Name = "Manaloc map growth" };
            thread.UnsafeStart();
            s_started = true;
            return true;
        }
        catch (Exception e) when (e is OutOfMemoryException or ThreadStartException)
        {
            s_unavailable = true;
            return false;
        }
    }

    private static void Run()
    {
        if (OperatingSystem.IsLinux())
        {
            try
            {
                LinuxNative.MakeCurrentThreadBatch();
            }
            catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
            {
                // Without it the preparer only wakes on the writer's core more often: correct, as the pool was.
            }
        }
        while (true)
        {
            List<IThreadPoolWorkItem> batch;
            lock (s_gate)
            {
                if (s_pending.Count == 0)
                {
                    s_sleeping = true;
                    batch = s_running; // empty: nothing to run this round
                }
                else
                {
                    batch = s_pending;
                    s_pending = s_running;
                    s_running = batch;
                }
            }
            if (batch.Count == 0)
            {
                s_wake.Wait();
                continue;
            }
            foreach (var work in batch)
            {
                try
                {
                    work.Execute();
                }
                catch (Exception)
                {
                    // A work item that failed leaves its table without a ready block (it maps its own); never the thread's end.
                }
            }
            batch.Clear();
        }
    }
}
