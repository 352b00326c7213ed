using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Pooling;

/// <summary>
/// A pool with a per-thread stack used without synchronisation, refilled from and spilled to one
/// shared, locked tier in batches (the semi-local pool of the article "Writing a Semi-Local Object Pool"), with a cap on the objects
/// retained across all threads, reclamation of exited threads' stacks, and trimming after gen-2 GCs
/// and under memory pressure.
/// </summary>
/// <typeparam name="T">The pooled type.</typeparam>
/// <remarks>
/// <para>Why: one lock around one stack (<see cref="LockedPool{T}"/>) serialises every thread; here a
/// thread in steady state (rent, return, rent, …) touches only its own stack and its own counters, so
/// throughput scales with threads. The shared tier is visited once per <see cref="PoolOptions.BatchSize"/>
/// objects when a thread's stack runs empty or full.</para>
/// <para>Memory ordering. A thread's stack (<c>Local</c>: items, count, credit, its counters) is written
/// only by its owner thread. Other threads touch a stack in three ways: (1) they read its counters and
/// count for statistics (racy, approximate, 64-bit reads are atomic on 64-bit platforms); (2) a trimmer or
/// <see cref="Dispose"/> publishes a request with <c>Volatile.Write(TrimRequested = 1)</c> then
/// <c>Volatile.Write(Limit = 0)</c>; the owner's fast return path reads <c>Limit</c> with
/// <c>Volatile.Read</c>, so it falls to the slow path, which takes the request with
/// <c>Interlocked.Exchange</c> and empties its own stack (a request that races with the owner resetting
/// Limit is only delayed to the next slow path, never lost or applied twice); (3) the stack of a thread
/// that has exited is drained under the shared lock — the owner can no longer run, and thread exit
/// publishes its last writes; (4) <see cref="Dispose"/> drains live threads' stacks too, through an
/// asymmetric hand-shake: the owner's fast paths publish their change to the count and then read the
/// stack's <c>Closed</c> flag, Dispose sets the flag, runs a process-wide barrier, then reads the count
/// (see <c>DrainLiveStacks</c>); the slots of a closed stack are taken with exchanges only. The global cap is a budget, <c>_budget</c> = Σ credit of every stack + the
/// shared count, changed only with Interlocked (a CAS loop that never lets it pass the cap); a stack
/// holds at most its credit, so retained ≤ budget ≤ <see cref="PoolOptions.MaxRetained"/>. Credit is
/// given back by its owner only: when its stack and the shared tier have run dry (a rent that creates),
/// or when it serves a trim request (trims ask every stack holding credit, empty or not). A thread
/// that stops using the pool without exiting keeps its credit until it exits (then it is reclaimed),
/// so while it is blocked the other threads can retain that much less.</para>
/// <para>A cross-thread return (rent on A, return on B) works: the object joins B's stack, and when
/// B's stack fills, the surplus spills to the shared tier where A refills from. Its cost is one
/// shared-tier visit per batch (measured by the lab's <c>pool-scaling</c> experiment).</para>
/// <para>Thread safety: every member is safe from any thread.</para>
/// </remarks>
public sealed partial class SemiLocalPool<T> : IObjectPool<T>, IPoolStatisticsSource where T : class
{
    private readonly PoolPolicy<T> _policy;
    private readonly int _batch;
    private readonly int _localCapacity;
    private readonly int _maxRetained;
    private readonly SlotLease _lease;

    /// <summary>This pool's slot lease (tests: is it given back once the pool is gone?).</summary>
    internal SlotLease Lease => _lease;
    private readonly int _slotId;
    private readonly long _token;
    // The token the fast paths look for: _token, or -1 in debug mode (never matches: debug work stays on the slow paths).
    private readonly long _fastToken;
    private readonly PoolDebugTracker<T>? _debug;
    private readonly DuplicateReturns _duplicates;
    // _duplicates != Unchecked: the fast return path's flag.
    private readonly bool _scan;
    private readonly bool _resets;
    private readonly bool _plainReturn;
    private readonly bool _trimAfterGen2;
    private int _disposed;

    /// <summary>Creates a pool whose objects come from <paramref name="factory"/> (nothing is reset on return), with <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public SemiLocalPool(Func<T> factory, PoolOptions? options = null)
        : this(PoolPolicies.Create(factory ?? throw new ArgumentNullException(nameof(factory))), options)
    {
    }

    /// <summary>Creates a pool with <paramref name="policy"/> and <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public SemiLocalPool(PoolPolicy<T> policy, PoolOptions? options = null)
        : this(policy, options ?? new PoolOptions(), register: true, DuplicateReturns.Throw)
    {
    }

    internal SemiLocalPool(PoolPolicy<T> policy, PoolOptions options, bool register, DuplicateReturns duplicates)
    {
        ArgumentNullException.ThrowIfNull(policy);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _policy = policy;
        _resets = policy.ResetsObjects;
        _plainReturn = !_resets && !options.DebugMode;
        Name = options.Name ?? typeof(T).Name;
        _batch = options.BatchSize;
        _localCapacity = options.LocalCapacity;
        _maxRetained = options.ResolveMaxRetained();
        _debug = options.DebugMode ? new PoolDebugTracker<T>(Name, $"{s_kind} '{Name}'") : null;
        _duplicates = duplicates;
        _scan = duplicates != DuplicateReturns.Unchecked;
        _shared = new Slot[Math.Min(_maxRetained, Math.Max(_batch * 2, 16))];
        _lease = ThreadSlots.Lease();
        _slotId = _lease.Id;
        _token = _lease.Token;
        _fastToken = options.DebugMode ? -1 : _token;
        _trimAfterGen2 = options.TrimAfterGen2;
        // Always registered: with trimming off it only watches for the pool being collected without
        // Dispose, then forgets every thread's stack and frees the slot id. The hook holds the stacks,
        // the lock and the lease, never the pool.
        var locals = _locals;
        var gate = _lock;
        var lease = _lease;
        Gen2GcCallback.Register(static pool => ((SemiLocalPool<T>)pool).OnGen2(), this, () => ForgetStacks(locals, gate, lease));
        if (register) PoolMetrics.Register(this);
    }

    /// <inheritdoc/>
    public string Name { get; }

    // "SemiLocalPool<Order>": the kind in messages and ToString.
    private static readonly string s_kind = PoolText.Kind("SemiLocalPool", typeof(T));

    /// <summary>The pool's kind, name and idle objects: <c>SemiLocalPool&lt;Order&gt; 'orders' (12 retained)</c>, or <c>(disposed)</c>.</summary>
    /// <remarks>Takes the shared lock to sum the stacks (as <see cref="GetStatistics"/>). Thread safety: safe from any thread.</remarks>
    public override string ToString()
        => PoolText.Describe(s_kind, Name, Volatile.Read(ref _disposed) != 0, Volatile.Read(ref _disposed) != 0 ? 0 : GetStatistics().Retained);

    string IPoolStatisticsSource.Kind => "object-pool";

    /// <summary>The cap on idle objects over all threads (resolved <see cref="PoolOptions.MaxRetained"/>).</summary>
    public int MaxRetained => _maxRetained;

    /// <inheritdoc/>
    /// <remarks>
    /// Fast path: the thread's stack, popped without synchronisation. It is found with one
    /// thread-static load and a token compare when this pool is the one whose slow path the thread ran
    /// last, else through the thread's slot array. An empty stack, debug mode and Dispose go through
    /// <see cref="RentChecked"/>.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public T Rent()
    {
        var entry = ThreadSlots.t_lastPool;
        if (entry is null || entry.Token != _fastToken) entry = ThreadSlots.Get(_slotId, _fastToken); // another pool was last
        // The token is this pool's and never reused, so the entry is our Local.
        if (entry is not null && _disposed == 0 && Unsafe.As<Local>(entry).TryPop(out T? item))
        {
            return item;
        }
        return RentChecked();
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidOperationException"><paramref name="item"/> is already idle on this thread's
    /// stack (a double return: see the remarks); in debug mode, any double or foreign return.</exception>
    /// <remarks>
    /// <para>Double return. A return of an object that is still among the 8 most recent objects of the
    /// returning thread's stack throws and changes nothing: the pool keeps the object once, its statistics
    /// count no drop and the policy does not see the second return. So the usual bug, <c>Return(x);
    /// Return(x);</c> on one thread with no rent of <c>x</c> in between, is caught when at most 7 other
    /// objects were returned in between and <c>x</c> is still on this thread's stack: it leaves the checked
    /// window after 8 newer returns, when it is rented again (a later return is then legitimate), when
    /// <see cref="PoolOptions.LocalCapacity"/>/2 newer returns overflow the stack (its older half moves to
    /// the shared tier), when a trim empties the stack, or when the thread exits. A double return after
    /// that, or one made on another thread than the first return, is caught only in debug mode
    /// (<see cref="PoolOptions.DebugMode"/>), which tracks every object handed out. The window is small on
    /// purpose: a return compares at most 8 references inline, so a rent/return pair costs what it cost
    /// without the check (the lab's pool-scaling measures it), however many idle objects the stack holds.</para>
    /// <para>Fast path (no debug mode, a policy that resets nothing): the scan for the object and a push
    /// on the thread's stack, found as in <see cref="Rent"/>. Otherwise <see cref="ReturnChecked"/> runs
    /// the checks, then the policy.</para>
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Return(T item)
    {
        if (item is null) ThrowHelper.ThrowArgumentNull(nameof(item));
        var entry = ThreadSlots.t_lastPool;
        if (entry is null || entry.Token != _fastToken) entry = ThreadSlots.Get(_slotId, _fastToken); // another pool was last
        // _plainReturn is false in debug mode and when the policy resets objects. A duplicate fails the push: the slow path throws.
        if (entry is not null && _plainReturn && Unsafe.As<Local>(entry).TryPush(item, _scan))
        {
            return;
        }
        ReturnChecked(item);
    }

    /// <summary>How many of the objects on top of a thread's stack a return compares with (see <see cref="Return"/>).</summary>
    /// <remarks>Bounds the cost of a return (at most this many reference compares, inline) however large
    /// <see cref="PoolOptions.LocalCapacity"/> is: a scan of 64 (vector compares behind a call) made a rent/return
    /// pair on a thread whose stack held idle objects up to twice as slow in the lab.</remarks>
    internal const int DuplicateScanDepth = 8;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private T RentChecked()
    {
        T item = RentCore();
        if (_debug is null) MakeLast();
        else _debug.OnRent(item);
        return item;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnChecked(T item)
    {
        _debug?.OnReturn(item);
        var local = CurrentLocal();
        // Before the policy: a second reset (or a drop that disposes an object the pool still holds) must not run.
        if (_scan && local is not null && local.Holds(item)) RefuseDuplicate(local, item);
        else if (_resets && !_policy.Return(item)) DropOne(item);
        else Store(local, item, scan: false);
        if (_debug is null && ThreadSlots.t_lastPool?.Token != _token) MakeLast();
    }

    /// <summary>Makes this thread's stack (if any) the fast paths' "pool used last".</summary>
    private void MakeLast()
    {
        var local = ThreadSlots.Get(_slotId, _token);
        if (local is not null) ThreadSlots.t_lastPool = local;
    }

    /// <summary>Rent without debug tracking (the buffer manager tracks at its own level).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal T RentCore()
    {
        var local = Unsafe.As<Local?>(ThreadSlots.Get(_slotId, _token));
        if (local is not null && _disposed == 0 && local.TryPop(out T? item))
        {
            return item;
        }
        return RentSlow(local);
    }

    /// <summary>Return without the null check, policy reset and debug tracking (a duplicate is still refused).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ReturnCore(T item) => Store(CurrentLocal(), item, _scan);

    /// <summary>Pushes on the thread's stack, or takes the slow path; <paramref name="scan"/>: look for a duplicate first.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Store(Local? local, T item, bool scan)
    {
        if (local is not null && local.TryPush(item, scan))
        {
            return;
        }
        ReturnSlow(local, item, scan);
    }

    /// <summary>A return of an object the thread's stack holds: throws (object pools) or keeps it once and counts a drop (buffer tiers).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RefuseDuplicate(Local local, T item)
    {
        Diagnostics.ManalocEventSource.Log.DoubleReturn(Name, item.GetType().Name);
        if (_duplicates == DuplicateReturns.Throw) ThrowHelper.ThrowDoubleReturn($"{s_kind} '{Name}'", PoolText.TypeName(item.GetType()));
        local.Drops++; // the buffer manager's contract: refused quietly, counted as a drop
    }

    /// <summary>The calling thread's stack, if it has one (the buffer manager checks whether it is empty).</summary>
    internal Local? CurrentLocal() => Unsafe.As<Local?>(ThreadSlots.Get(_slotId, _token));

    private void DropOne(T item)
    {
        var local = Unsafe.As<Local?>(ThreadSlots.Get(_slotId, _token));
        if (local is not null) local.Drops++;
        else Interlocked.Increment(ref _orphanDrops); // no stack on this thread: count at pool level
        PoolDrop.Drop(item);
    }

    /// <summary>One stored object; a struct so stores into the array need no covariance check.</summary>
    internal struct Slot
    {
        public T? Value;
    }

    [Conditional("DEBUG")]
    private static void AssertLocal(Local local)
    {
        Debug.Assert(local.Count >= 0 && local.Count <= local.Credit, "a stack holds at most its credit");
        Debug.Assert(local.Credit <= local.Items.Length, "credit never exceeds the stack's capacity");
    }
}
