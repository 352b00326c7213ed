using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using Manaloc.Buffers;
using Manaloc.Concurrency.Tests.Mutants;
using Manaloc.Pooling;
using Microsoft.Coyote.Runtime;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>Rent, return and trim: what the pool scenario does to a pool (a real one, or a broken one).</summary>
public interface IPoolUnderTest<T>
{
    T Rent();
    void Return(T item);
    void Trim();
}

/// <summary>A pooled object that records whether someone holds it.</summary>
public sealed class Held
{
    public int Holders;
}

/// <summary>
/// SemiLocalPool, CategorizedPool and BufferManager under Coyote: rents and returns on two
/// threads, a cross-thread return, a trim racing the other thread, both threads exiting with
/// objects on their stacks (reclaimed later), then more rents on the main thread. The pools hold a
/// System.Threading.Lock around their shared tiers, which Coyote 1.7 cannot intercept, so these
/// explore interleavings of whole pool operations (see Explorer.Explore's libraryAtomics).
/// </summary>
public sealed class PoolSchedules(ITestOutputHelper output)
{
    // Invariant: no object in two places. Every rent must claim the object (Holders 0→1 by CAS):
    // a failed claim means the pool handed out an object someone still holds (or one it handed
    // out twice). Holders drop to 0 only just before the holder returns the object.
    internal static void NoObjectInTwoPlaces<T>(IPoolUnderTest<T> pool, Func<T, bool> tryClaim, Action<T> release)
    {
        var handOff = new ConcurrentQueue<T>();
        T Rent()
        {
            SchedulingPoint.Interleave();
            var item = pool.Rent();
            Specification.Assert(tryClaim(item), "no object in two places: the pool handed out an object someone holds");
            return item;
        }
        void Return(T item)
        {
            release(item);
            SchedulingPoint.Interleave();
            pool.Return(item);
        }
        void Worker(bool trims)
        {
            var a = Rent();
            var b = Rent();
            Return(a);
            handOff.Enqueue(b); // still held: the main thread returns it (a cross-thread return)
            SchedulingPoint.Interleave();
            if (trims) pool.Trim();
            Return(Rent());
            Rent(); // kept: this thread exits with one object out and others on its stack
        }
        var threads = new[] { new Thread(() => Worker(trims: false)), new Thread(() => Worker(trims: true)) };
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        while (handOff.TryDequeue(out var item)) Return(item);
        for (int i = 0; i < 4; i++) Rent(); // the exited threads' stacks are reclaimed on some of these slow paths
    }

    private static bool Claim(Held item) => Interlocked.CompareExchange(ref item.Holders, 1, 0) == 0;
    private static void Release(Held item) => Volatile.Write(ref item.Holders, 0);
    private static bool Claim(byte[] buffer) => Interlocked.CompareExchange(ref Unsafe.As<byte, int>(ref buffer[0]), 1, 0) == 0;
    private static void Release(byte[] buffer) => Volatile.Write(ref Unsafe.As<byte, int>(ref buffer[0]), 0);

    // No idle-release timer: it is a TimeProvider timer, which Coyote does not control (its creation alone is reported as an
    // uncontrolled call, a "bug" before any schedule runs). These schedules explore rent, return and trim; the idle release's
    // drain racing its owner is tested on a manual clock in tests/Manaloc.Tests/Pooling.
    private static PoolOptions SmallOptions => new() { BatchSize = 1, LocalCapacity = 2, MaxRetained = 3, TrimAfterGen2 = false, ReleaseIdleAfter = Timeout.InfiniteTimeSpan };

    private sealed class SemiLocal(SemiLocalPool<Held> pool) : IPoolUnderTest<Held>
    {
        public Held Rent() => pool.Rent();
        public void Return(Held item) => pool.Return(item);
        public void Trim() => pool.Trim();
    }

    private sealed class Categorized(CategorizedPool<Held> pool) : IPoolUnderTest<Held>
    {
        public Held Rent() => pool.Rent("c");
        public void Return(Held item) => pool.Return("c", item);
        public void Trim() => pool.Trim();
    }

    private sealed class Buffers(BufferManager manager) : IPoolUnderTest<byte[]>
    {
        public byte[] Rent() => manager.Rent(16);
        public void Return(byte[] item) => manager.Return(item);
        public void Trim() => manager.Trim();
    }

    private static PoolPolicy<Held> Policy => PoolPolicies.Create(() => new Held());

    [CoyoteFact]
    public void SemiLocalPool_never_hands_out_an_object_twice()
        => Assert.Equal(0, Explorer.Explore(() =>
        {
            using var pool = new SemiLocalPool<Held>(Policy, SmallOptions);
            NoObjectInTwoPlaces(new SemiLocal(pool), Claim, Release);
        }, output, libraryAtomics: false).Bugs);

    [CoyoteFact]
    public void CategorizedPool_never_hands_out_an_object_twice()
        => Assert.Equal(0, Explorer.Explore(() =>
        {
            using var pool = new CategorizedPool<Held>(Policy, SmallOptions);
            NoObjectInTwoPlaces(new Categorized(pool), Claim, Release);
        }, output, libraryAtomics: false).Bugs);

    [CoyoteFact]
    public void BufferManager_never_hands_out_a_buffer_twice()
        => Assert.Equal(0, Explorer.Explore(() =>
        {
            using var manager = new BufferManager(new BufferManagerOptions { BuffersPerThread = 2, BatchSize = 1, MaxRetainedBytesPerClass = 64, ReleaseIdleAfter = Timeout.InfiniteTimeSpan });
            NoObjectInTwoPlaces(new Buffers(manager), Claim, Release);
        }, output, libraryAtomics: false).Bugs);

    [CoyoteFact]
    public void Mutant_pool_whose_pop_is_a_plain_store_is_caught()
    {
        var outcome = Explorer.Explore(() => NoObjectInTwoPlaces(new RacyStackPool<Held>(() => new Held()), Claim, Release), output);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the broken pool's double hand-out");
        Assert.Contains("no object in two places", outcome.FirstBug);
    }

    [CoyoteFact]
    public void Mutant_buffer_pool_whose_pop_is_a_plain_store_is_caught()
    {
        var outcome = Explorer.Explore(() => NoObjectInTwoPlaces(new RacyStackPool<byte[]>(() => new byte[16]), Claim, Release), output);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the broken buffer pool's double hand-out");
        Assert.Contains("no object in two places", outcome.FirstBug);
    }
}
