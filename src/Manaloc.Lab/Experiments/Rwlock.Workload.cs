using System.Runtime.CompilerServices;
using Manaloc.Lab.Harness;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>The work loop inside and outside the lock, and one adapter per lock type.</summary>
public sealed partial class Rwlock
{
    private static double PilotNsPerOp<TLock>(TLock gate, Region region, uint writeThreshold, int hold)
        where TLock : struct, ILockAdapter
    {
        ulong rng = 0x2545F4914F6CDD1DUL;
        double best = double.MaxValue;
        for (int round = 0; round < 3; round++)
        {
            long ops = 0;
            long start = System.Diagnostics.Stopwatch.GetTimestamp();
            TimeSpan elapsed;
            do
            {
                Work(gate, region, ref rng, writeThreshold, hold, 256);
                ops += 256;
                elapsed = System.Diagnostics.Stopwatch.GetElapsedTime(start);
            }
            while (elapsed < TimeSpan.FromMilliseconds(0.5));
            best = Math.Min(best, elapsed.TotalNanoseconds / ops);
        }
        return Math.Max(best, 0.5);
    }

    private static void Work<TLock>(TLock gate, Region region, ref ulong rng, uint writeThreshold, int hold, long operations)
        where TLock : struct, ILockAdapter
    {
        double sink = 0;
        ulong x = rng;
        for (long i = 0; i < operations; i++)
        {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if ((uint)x < writeThreshold)
            {
                gate.EnterWrite();
                region.Write(hold);
                gate.ExitWrite();
            }
            else
            {
                gate.EnterRead();
                sink += region.Read(hold);
                gate.ExitRead();
            }
        }
        rng = x;
        s_sink = sink; // keeps the reads alive
    }

    private static int Hold(Measurement m)
        => int.TryParse(m.Parameters.GetValueOrDefault("hold"), System.Globalization.CultureInfo.InvariantCulture, out int h) ? h : -1;

    private static int ThreadCount(Measurement m)
        => int.TryParse(m.Parameters.GetValueOrDefault("threads"), System.Globalization.CultureInfo.InvariantCulture, out int t) ? t : m.Threads;

    private static int Writers(Measurement m)
        => int.TryParse(m.Parameters.GetValueOrDefault("writers"), System.Globalization.CultureInfo.InvariantCulture, out int w) ? w : -1;

    /// <summary>The shared critical region: readers sum a series over shared terms; writers rewrite them.</summary>
    private sealed class Region
    {
        private readonly double[] _terms = Enumerable.Range(0, 64).Select(i => 1.0 / (i + 1)).ToArray();

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public double Read(int hold)
        {
            double sum = 1, term = 1;
            for (int k = 1; k <= hold; k++)
            {
                term /= k;
                sum += term * _terms[k & 63];
            }
            return sum;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Write(int hold)
        {
            double term = 1;
            for (int k = 1; k <= hold; k++)
            {
                term /= k;
                _terms[k & 63] = 1 + term;
            }
        }
    }

    private interface ILockAdapter
    {
        void EnterRead();
        void ExitRead();
        void EnterWrite();
        void ExitWrite();
    }

    private readonly struct MonitorAdapter(object gate) : ILockAdapter
    {
        public void EnterRead() => System.Threading.Monitor.Enter(gate);
        public void ExitRead() => System.Threading.Monitor.Exit(gate);
        public void EnterWrite() => System.Threading.Monitor.Enter(gate);
        public void ExitWrite() => System.Threading.Monitor.Exit(gate);
    }

    private readonly struct LockAdapter(Lock gate) : ILockAdapter
    {
        public void EnterRead() => gate.Enter();
        public void ExitRead() => gate.Exit();
        public void EnterWrite() => gate.Enter();
        public void ExitWrite() => gate.Exit();
    }

    private readonly struct RwlsAdapter(ReaderWriterLockSlim gate) : ILockAdapter
    {
        public void EnterRead() => gate.EnterReadLock();
        public void ExitRead() => gate.ExitReadLock();
        public void EnterWrite() => gate.EnterWriteLock();
        public void ExitWrite() => gate.ExitWriteLock();
    }

    private readonly struct SlimAdapter(SlimReaderWriterLock gate) : ILockAdapter
    {
        public void EnterRead() => gate.EnterReadLock();
        public void ExitRead() => gate.ExitReadLock();
        public void EnterWrite() => gate.EnterWriteLock();
        public void ExitWrite() => gate.ExitWriteLock();
    }
}
