using System.Diagnostics.Tracing;
using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>
/// The double-return refusal every pool keeps outside debug mode: the newcomer's
/// <c>Return(x); Return(x);</c> throws on the second call and leaves the pool as the first return left
/// it; legitimate reuse is never refused. One subclass per pool.
/// </summary>
public abstract class DoubleReturnContractTests
{
    /// <summary>The pool's kind as its messages write it (<c>SemiLocalPool&lt;PooledThing&gt;</c>).</summary>
    protected abstract string Kind { get; }

    /// <summary>How many newer returns (net of rents) the pool's guarantee covers between the two returns of one object, with the options below.</summary>
    protected abstract int NewerReturnsCovered { get; }

    /// <summary>The name its messages give (a category's pool is named <c>{name}/{category}</c>).</summary>
    protected virtual string MessageName(string name) => name;

    protected abstract IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options);

    private IObjectPool<PooledThing> Create(PoolPolicy<PooledThing>? policy = null, bool debug = false)
        => CreatePool(policy ?? PoolPolicies.New<PooledThing>(), new PoolOptions
        {
            Name = "twice-" + Guid.NewGuid().ToString("N")[..8],
            BatchSize = 4,
            LocalCapacity = 8,
            MaxRetained = 256,
            DebugMode = debug,
            TrimAfterGen2 = false, // a gen-2 pass between two returns would make a test depend on GC timing
        });

    /// <summary>The second return throws, naming the pool and the type; the pool holds the object once.</summary>
    private void AssertRefused(IObjectPool<PooledThing> pool, PooledThing thing)
    {
        var before = pool.GetStatistics();
        var e = Assert.Throws<InvalidOperationException>(() => pool.Return(thing));
        Assert.Contains($"{Kind} '{MessageName(pool.Name)}'", e.Message, StringComparison.Ordinal);
        Assert.Contains("PooledThing was returned twice", e.Message, StringComparison.Ordinal);
        Assert.Equal(before, pool.GetStatistics()); // nothing stored, dropped or counted
        Assert.False(thing.Disposed);
    }

    /// <summary>Rents every idle object (and one more) and checks that none came out twice.</summary>
    private static void AssertEveryIdleObjectOnce(IObjectPool<PooledThing> pool)
    {
        long idle = pool.GetStatistics().Retained;
        var seen = new HashSet<PooledThing>(ReferenceEqualityComparer.Instance);
        for (long i = 0; i <= idle; i++) Assert.True(seen.Add(pool.Rent()), "an object was handed out twice");
    }

    [Fact]
    public void The_newcomer_trial_second_return_throws_and_the_next_two_rents_differ()
    {
        using var pool = Create();
        var thing = pool.Rent();
        pool.Return(thing);
        AssertRefused(pool, thing);
        var first = pool.Rent();
        var second = pool.Rent();
        Assert.Same(thing, first);
        Assert.NotSame(first, second);
        var stats = pool.GetStatistics();
        Assert.Equal(0, stats.Drops);
        Assert.Equal(3, stats.Rents);
    }

    [Fact]
    public void The_refusal_raises_the_DoubleReturn_event()
    {
        using var listener = new DoubleReturnListener();
        using var pool = Create();
        var thing = pool.Rent();
        pool.Return(thing);
        Assert.Throws<InvalidOperationException>(() => pool.Return(thing));
        lock (listener.Pools) Assert.Contains(MessageName(pool.Name), listener.Pools);
    }

    [Fact]
    public void With_a_reset_policy_the_second_return_throws_before_the_reset()
    {
        int resets = 0;
        using var pool = Create(PoolPolicies.Create(() => new PooledThing(), _ =>
        {
            Interlocked.Increment(ref resets);
            return true;
        }));
        var thing = pool.Rent();
        pool.Return(thing);
        AssertRefused(pool, thing);
        Assert.Equal(1, resets); // the idle object was not reset a second time
        Assert.NotSame(pool.Rent(), pool.Rent());
    }

    [Fact]
    public void After_Trim_the_trial_still_throws()
    {
        using var pool = Create();
        var things = Enumerable.Range(0, 6).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        pool.Trim();
        var thing = pool.Rent();
        pool.Return(thing);
        AssertRefused(pool, thing);
        Assert.NotSame(pool.Rent(), pool.Rent());
    }

    [Theory]
    [InlineData(7)] // the stack is full before x: its return spills (semi-local), x stays on top
    [InlineData(5)] // a spill between the two returns of x
    [InlineData(0)] // x at the bottom of an empty stack
    [InlineData(13)] // after two spills
    public void Across_batch_boundaries_the_second_return_throws(int before)
    {
        foreach (int between in new[] { 0, NewerReturnsCovered })
        {
            using var pool = Create();
            var others = Enumerable.Range(0, before + between).Select(_ => pool.Rent()).ToArray();
            var thing = pool.Rent();
            foreach (var t in others[..before]) pool.Return(t);
            pool.Return(thing);
            foreach (var t in others[before..]) pool.Return(t);
            AssertRefused(pool, thing);
            var stats = pool.GetStatistics();
            Assert.Equal(stats.Creations, stats.Retained); // every object made is idle, each once
            Assert.Equal(0, stats.Drops);
            AssertEveryIdleObjectOnce(pool);
        }
    }

    [Fact]
    public void Rent_return_rent_return_of_one_object_is_not_refused()
    {
        using var pool = Create();
        var a = pool.Rent();
        pool.Return(a);
        var again = pool.Rent();
        Assert.Same(a, again);
        pool.Return(again); // the same object, rented in between: legitimate
        Assert.Same(a, pool.Rent());
        Assert.Equal(0, pool.GetStatistics().Drops);
    }

    [Fact]
    public void Legitimate_reuse_under_any_interleaving_is_never_refused()
    {
        using var pool = Create();
        var held = new List<PooledThing>();
        var random = new Random(26);
        for (int i = 0; i < 20_000; i++)
        {
            if (held.Count < 40 && (held.Count == 0 || random.Next(2) == 0))
            {
                var t = pool.Rent();
                Assert.DoesNotContain(t, held); // never handed out twice
                held.Add(t);
            }
            else
            {
                int pick = random.Next(held.Count); // any order: top, bottom, middle
                var t = held[pick];
                held.RemoveAt(pick);
                pool.Return(t);
            }
        }
        foreach (var t in held) pool.Return(t);
        AssertEveryIdleObjectOnce(pool);
    }

    [Fact]
    public void Debug_mode_catches_a_double_return_after_the_object_left_the_checked_stack()
    {
        using var pool = Create(debug: true);
        var others = Enumerable.Range(0, 40).Select(_ => pool.Rent()).ToArray();
        var thing = pool.Rent();
        pool.Return(thing);
        foreach (var t in others) pool.Return(t); // 40 newer returns: past every pool's scan
        var e = Assert.Throws<InvalidOperationException>(() => pool.Return(thing));
        Assert.Contains($"{Kind} '{MessageName(pool.Name)}'", e.Message, StringComparison.Ordinal);
        AssertEveryIdleObjectOnce(pool);
    }

    [Fact]
    public void Debug_mode_catches_a_double_return_from_another_thread()
    {
        using var pool = Create(debug: true);
        var thing = pool.Rent();
        pool.Return(thing);
        Exception? caught = null;
        var other = new Thread(() => caught = Record.Exception(() => pool.Return(thing)));
        other.Start();
        other.Join();
        Assert.IsType<InvalidOperationException>(caught);
        Assert.Same(thing, pool.Rent());
        Assert.NotSame(thing, pool.Rent());
    }

    private sealed class DoubleReturnListener : EventListener
    {
        public List<string> Pools { get; } = [];

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Manaloc") EnableEvents(eventSource, EventLevel.Verbose);
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventId == 3 && e.Payload is { Count: 2 } p)
            {
                lock (Pools) Pools.Add((string)p[0]!);
            }
        }
    }
}

public sealed class LockedPoolDoubleReturnTests : DoubleReturnContractTests
{
    protected override string Kind => "LockedPool<PooledThing>";

    protected override int NewerReturnsCovered => 0; // the object stored last: one compare under the lock

    protected override IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options) => new LockedPool<PooledThing>(policy, options);
}

public sealed class SemiLocalPoolDoubleReturnTests : DoubleReturnContractTests
{
    protected override string Kind => "SemiLocalPool<PooledThing>";

    protected override int NewerReturnsCovered => 3; // fewer than LocalCapacity / 2 (8 / 2)

    protected override IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options) => new SemiLocalPool<PooledThing>(policy, options);

    [Fact]
    public void An_object_survives_half_a_stack_of_newer_returns_and_is_still_refused()
    {
        const int capacity = 8;
        using var pool = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(), new PoolOptions { BatchSize = 4, LocalCapacity = capacity, MaxRetained = 256, TrimAfterGen2 = false });
        for (int start = 0; start < capacity; start++) // x at every position of the stack
        {
            var filler = Enumerable.Range(0, start).Select(_ => pool.Rent()).ToArray();
            var newer = Enumerable.Range(0, capacity / 2).Select(_ => pool.Rent()).ToArray();
            var thing = pool.Rent();
            foreach (var t in filler) pool.Return(t);
            pool.Return(thing);
            foreach (var t in newer) pool.Return(t); // LocalCapacity/2 newer returns, spills included
            Assert.Throws<InvalidOperationException>(() => pool.Return(thing));
            pool.Trim(); // the next position starts from an empty stack
        }
    }
}

/// <summary>A category of a <see cref="CategorizedPool{T}"/> refuses as a semi-local pool does.</summary>
public sealed class CategorizedPoolDoubleReturnTests : DoubleReturnContractTests
{
    protected override string Kind => "SemiLocalPool<PooledThing>";

    protected override int NewerReturnsCovered => 3; // fewer than LocalCapacity / 2 (8 / 2)

    protected override string MessageName(string name) => name + "/section";

    protected override IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options)
        => new CategoryAdapter(new CategorizedPool<PooledThing>(policy, options));
}
