using CsCheck;
using Manaloc.Buffers;
using Manaloc.Pooling;

namespace Manaloc.Concurrency.Tests.Properties;

/// <summary>
/// Pools and the buffer manager against a model: random sequences of rent, return (of any held
/// object), trim and dispose from one thread; and rent/return run in parallel checked for
/// linearizability (CsCheck's SampleParallel: the parallel run must match some sequential order).
/// </summary>
public sealed class PoolModelTests
{
    /// <summary>Iterations per property; PROPERTY_ITERATIONS overrides.</summary>
    internal static long Iterations { get; } = long.TryParse(Environment.GetEnvironmentVariable("PROPERTY_ITERATIONS"), out long n) && n > 0 ? n : 300;

    /// <summary>The real pool plus what the test holds; checked after every operation.</summary>
    public sealed class PoolUnderTest(Func<int, object> rent, Action<object> giveBack, Action trim, Func<object, int> size)
    {
        public readonly List<object> Held = [];
        public readonly List<string> Problems = [];

        public void Rent(int minimum)
        {
            var item = rent(minimum);
            if (Held.Any(h => ReferenceEquals(h, item))) Problems.Add("handed out an object the caller still holds");
            if (size(item) < minimum) Problems.Add($"asked {minimum}, got {size(item)}");
            Held.Add(item);
        }

        public void Return(int pick)
        {
            if (Held.Count == 0) return;
            var item = Held[pick % Held.Count];
            Held.Remove(item);
            giveBack(item);
        }

        public void Trim() => trim();

        public override string ToString() => $"held {Held.Count}, problems [{string.Join("; ", Problems)}]";
    }

    /// <summary>The model: how many objects the caller holds.</summary>
    public sealed class HeldModel
    {
        public int Held;
        public override string ToString() => $"held {Held}";
    }

    private static bool Agree(PoolUnderTest actual, HeldModel model) => actual.Problems.Count == 0 && actual.Held.Count == model.Held;

    private static GenOperation<PoolUnderTest, HeldModel>[] Operations(int maxSize) =>
    [
        Gen.Int[1, maxSize].Operation<PoolUnderTest, HeldModel>(n => $"Rent({n})", (a, n) => a.Rent(n), (m, _) => m.Held++),
        Gen.Int[0, 1000].Operation<PoolUnderTest, HeldModel>(i => $"Return(#{i})", (a, i) => a.Return(i), (m, _) => m.Held = Math.Max(0, m.Held - 1)),
        Gen.Operation<PoolUnderTest, HeldModel>("Trim", a => a.Trim(), _ => { }),
    ];

    public sealed class Thing;

    [Fact]
    public void SemiLocalPool_matches_the_model()
    {
        Gen.Int[1, 8].Select(batch => (batch, new PoolOptions { BatchSize = batch, LocalCapacity = batch * 2, MaxRetained = batch * 3, TrimAfterGen2 = false }))
            .Select(t =>
            {
                var pool = new SemiLocalPool<Thing>(PoolPolicies.Create(() => new Thing()), t.Item2);
                return (new PoolUnderTest(_ => pool.Rent(), o => pool.Return((Thing)o), pool.Trim, _ => 1), new HeldModel());
            })
            .SampleModelBased(Operations(1), Agree, iter: Iterations);
    }

    [Fact]
    public void CategorizedPool_matches_the_model()
    {
        Gen.Const(0).Select(_ =>
            {
                var pool = new CategorizedPool<Thing>(PoolPolicies.Create(() => new Thing()), new PoolOptions { BatchSize = 2, LocalCapacity = 4, MaxRetained = 6, TrimAfterGen2 = false });
                return (new PoolUnderTest(_ => pool.Rent("a"), o => pool.Return("a", (Thing)o), pool.Trim, _ => 1), new HeldModel());
            })
            .SampleModelBased(Operations(1), Agree, iter: Iterations);
    }

    [Fact]
    public void BufferManager_matches_the_model()
    {
        Gen.Int[1, 4].Select(batch =>
            {
                var manager = new BufferManager(new BufferManagerOptions { BuffersPerThread = 4, BatchSize = batch, MaxRetainedBytesPerClass = 1 << 16, MaxBufferSize = 1 << 16 });
                return (new PoolUnderTest(n => manager.Rent(n), o => manager.Return((byte[])o), manager.Trim, o => ((byte[])o).Length), new HeldModel());
            })
            .SampleModelBased(Operations(5000), Agree, iter: Iterations);
    }

    /// <summary>State for the parallel check: a buffer manager and the buffers held, by identity.</summary>
    public sealed class SharedBuffers
    {
        public readonly BufferManager Manager = new(new BufferManagerOptions { BuffersPerThread = 2, BatchSize = 1, MaxRetainedBytesPerClass = 1 << 12 });
        public readonly System.Collections.Concurrent.ConcurrentDictionary<byte[], int> Held = new(ReferenceEqualityComparer.Instance);
        public int DoubleHandOuts;
        public override string ToString() => $"held {Held.Count}, double hand-outs {DoubleHandOuts}";
    }

    [Fact]
    public void BufferManager_rent_and_return_in_parallel_are_linearizable()
    {
        // Rent-then-return pairs and rent-and-keep, in parallel: every order gives the same count
        // held, and no buffer is held twice.
        Gen.Const(0).Select(_ => new SharedBuffers()).SampleParallel(
            [
                Gen.Int[1, 2048].Operation<SharedBuffers>(n => $"RentReturn({n})", (s, n) =>
                {
                    var b = s.Manager.Rent(n);
                    if (!s.Held.TryAdd(b, 0)) Interlocked.Increment(ref s.DoubleHandOuts);
                    s.Held.TryRemove(b, out int _);
                    s.Manager.Return(b);
                }),
                Gen.Int[1, 2048].Operation<SharedBuffers>(n => $"RentKeep({n})", (s, n) =>
                {
                    if (!s.Held.TryAdd(s.Manager.Rent(n), 0)) Interlocked.Increment(ref s.DoubleHandOuts);
                }),
            ],
            equal: (a, b) => a.Held.Count == b.Held.Count && a.DoubleHandOuts == 0 && b.DoubleHandOuts == 0,
            iter: Iterations);
    }

    /// <summary>State for the parallel pool check.</summary>
    public sealed class SharedPool
    {
        public readonly SemiLocalPool<Thing> Pool = new(PoolPolicies.Create(() => new Thing()), new PoolOptions { BatchSize = 1, LocalCapacity = 2, MaxRetained = 3, TrimAfterGen2 = false });
        public readonly System.Collections.Concurrent.ConcurrentDictionary<Thing, int> Held = new(ReferenceEqualityComparer.Instance);
        public int DoubleHandOuts;
        public override string ToString() => $"held {Held.Count}, double hand-outs {DoubleHandOuts}";
    }

    [Fact]
    public void SemiLocalPool_rent_return_and_trim_in_parallel_are_linearizable()
    {
        Gen.Const(0).Select(_ => new SharedPool()).SampleParallel(
            [
                Gen.Operation<SharedPool>("RentReturn", s =>
                {
                    var t = s.Pool.Rent();
                    if (!s.Held.TryAdd(t, 0)) Interlocked.Increment(ref s.DoubleHandOuts);
                    s.Held.TryRemove(t, out int _);
                    s.Pool.Return(t);
                }),
                Gen.Operation<SharedPool>("RentKeep", s =>
                {
                    if (!s.Held.TryAdd(s.Pool.Rent(), 0)) Interlocked.Increment(ref s.DoubleHandOuts);
                }),
                Gen.Operation<SharedPool>("Trim", s => s.Pool.Trim()),
            ],
            equal: (a, b) => a.Held.Count == b.Held.Count && a.DoubleHandOuts == 0 && b.DoubleHandOuts == 0,
            iter: Iterations);
    }
}
