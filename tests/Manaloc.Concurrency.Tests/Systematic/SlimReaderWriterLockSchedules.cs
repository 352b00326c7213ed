using Manaloc.Concurrency.Tests.Mutants;
using Manaloc.Threading;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>The four calls of a reader-writer lock the scenario makes (the real lock, or a broken one).</summary>
public interface IReaderWriterLock
{
    void EnterRead();
    void ExitRead();
    void EnterWrite();
    void ExitWrite();
}

public sealed class SlimReaderWriterLockSchedules(ITestOutputHelper output)
{
    private sealed class Real(SlimReaderWriterLock gate) : IReaderWriterLock
    {
        public void EnterRead() => gate.EnterReadLock();
        public void ExitRead() => gate.ExitReadLock();
        public void EnterWrite() => gate.EnterWriteLock();
        public void ExitWrite() => gate.ExitWriteLock();
    }

    // Invariant: mutual exclusion. Two writers and two readers (one reading twice) on their own
    // threads; inside the lock each bumps a counter with an Interlocked op (a scheduling point, so
    // Coyote can switch threads inside the critical section) and checks nobody incompatible is in.
    internal static void WritersAndReaders(Func<IReaderWriterLock> create)
    {
        var gate = create();
        int writers = 0, readers = 0;
        void Write()
        {
            gate.EnterWrite();
            Specification.Assert(Interlocked.Increment(ref writers) == 1 && Volatile.Read(ref readers) == 0, "mutual exclusion: a writer is in with another writer or a reader");
            Interlocked.Decrement(ref writers);
            gate.ExitWrite();
        }
        void Read(int times)
        {
            for (int i = 0; i < times; i++)
            {
                gate.EnterRead();
                Interlocked.Increment(ref readers);
                Specification.Assert(Volatile.Read(ref writers) == 0, "mutual exclusion: a reader is in with a writer");
                Interlocked.Decrement(ref readers);
                gate.ExitRead();
            }
        }
        var threads = new[] { new Thread(Write), new Thread(Write), new Thread(() => Read(2)), new Thread(() => Read(1)) };
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
    }

    [CoyoteFact]
    public void Mutual_exclusion_read_biased()
        => Assert.Equal(0, Explorer.Explore(() => WritersAndReaders(() => new Real(new SlimReaderWriterLock(spinCount: 0, inhibitFactor: 0))), output).Bugs);

    [CoyoteFact]
    public void Mutual_exclusion_plain()
        => Assert.Equal(0, Explorer.Explore(() => WritersAndReaders(() =>
        {
            var gate = new SlimReaderWriterLock(spinCount: 0);
            gate.TurnBiasOffForTests();
            return new Real(gate);
        }), output).Bugs);

    [CoyoteFact]
    public void Mutant_with_a_check_then_store_writer_entry_is_caught()
    {
        var outcome = Explorer.Explore(() => WritersAndReaders(() => new CheckThenStoreLock()), output);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the broken lock's double entry");
        Assert.Contains("mutual exclusion", outcome.FirstBug);
    }
}
