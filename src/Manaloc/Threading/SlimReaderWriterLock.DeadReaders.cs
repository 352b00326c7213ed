using System.Diagnostics.CodeAnalysis;

namespace Manaloc.Threading;

// SlimReaderWriterLock: dead-reader detection (the memory-ordering argument of the whole lock heads SlimReaderWriterLock.cs).
public sealed partial class SlimReaderWriterLock
{
    // A thread that exits while holding a read lock can never release it: its count stays in the state
    // word or in a reader slot, and every writer would wait for it forever. A writer that has slept
    // <see cref="DeadHolderCheckMilliseconds"/> waiting for readers looks through the records of threads
    // that have used any lock; a record whose thread is no longer alive and that still holds this lock
    // turns the hang into an <see cref="InvalidOperationException"/> naming the thread.
    // Cost: one registration per thread, at its first use of any lock (a global lock and a list add), and
    // for a writer that waits for readers a wake-up and a scan every <see cref="DeadHolderCheckMilliseconds"/>.
    // The fast paths pay nothing. Records of exited threads that hold nothing are dropped whenever the list
    // doubles. A record is written only by its own thread; once that thread has exited, its fields no longer
    // change, so the plain reads here see their final values (thread exit and <see cref="Thread.IsAlive"/>
    // synchronize through the runtime's thread store).

    /// <summary>How often a writer waiting for readers wakes to look for a reader whose thread exited.</summary>
    private const int DeadHolderCheckMilliseconds = 500;

    private static readonly List<ThreadRecord> s_records = [];
    private static int s_pruneAt = 64;

    /// <summary>Adds a new thread's record (its first use of any lock).</summary>
    private static void Register(ThreadRecord record)
    {
        lock (s_records)
        {
            if (s_records.Count >= s_pruneAt)
            {
                s_records.RemoveAll(static r => r.HoldsNothing && !r.Owner.IsAlive);
                s_pruneAt = Math.Max(64, 2 * s_records.Count);
            }
            s_records.Add(record);
        }
    }

    /// <summary>Throws if a thread that has exited still holds a read lock on this lock.</summary>
    private void ThrowIfAReaderDied()
    {
        ThreadRecord? dead = null;
        lock (s_records)
        {
            foreach (var record in s_records)
            {
                if (!record.Owner.IsAlive && record.Holds(_id))
                {
                    dead = record;
                    break;
                }
            }
        }
        if (dead is not null) ThrowReaderDied(dead);
    }

    [DoesNotReturn]
    private static void ThrowReaderDied(ThreadRecord dead)
        => throw new InvalidOperationException(
            $"A thread (managed id {dead.ThreadId}{(dead.Owner.Name is { } name ? $", \"{name}\"" : "")}) exited while holding a read lock on this " +
            "SlimReaderWriterLock: that lock can never be released, so no writer can enter. Release read locks in a finally block on the thread that took them.");
}
