using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Pooling;

/// <summary>
/// A pool with a per-thread stack used without synchronisation, refilled from and spilled to one
/// shared, locked tier in batches, with a cap on the objects
/// retained across all threads, reclamation of exited threads' stacks, trimming after gen-2 GCs
/// and under memory pressure, and release of what it holds beyond recent demand once idle for
/// <see cref="PoolOptions.ReleaseIdleAfter"/>.
/// </summary>
/// <typeparam name="T">The pooled type.</typeparam>
/// <remarks>
/// <para>Why: one lock around one stack (<see cref="LockedPool{T}"/>) serialises every thread; here a
/// thread in steady state (rent, return, rent, …) touches only its own stack and its own counters, so
/// throughput scales with threads. The shared tier is visited once per <see cref="PoolOptions.BatchSize"/>
/// objects when a thread's stack runs empty or full.</para>
/// <para>Memory ordering. A thread's stack (<c>Local</c>: items, count, credit, its counters) is written
/// only by its owner thread. Other threads touch a stack in these ways: (1) they read its counters and
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
/// (see <c>DrainLiveStacks</c>); the slots of a closed stack are taken with exchanges only; (5) the idle
/// release drains a quiet live thread's stack with the same hand-shake, and only the owner reopens it,
/// under the shared lock (see <c>ReleaseIdle</c>). The global cap is a budget, <c>_budget</c> = Σ credit of every stack + the
/// shared count, changed only with Interlocked (a CAS loop that never lets it pass the cap); a stack
/// holds at most its credit, so retained ≤ budget ≤ <see cref="PoolOptions.MaxRetained"/>. Credit is
/// given back by its owner only: when its stack and the shared tier have run dry (a rent that creates),
/// or when it serves a trim request (trims ask every stack holding credit, empty or not). A thread
/// that stops using the pool without exiting keeps its credit until it exits (then it is reclaimed),
/// so while it is blocked the other threads can retain that much less (its objects, not its credit,
/// go with the idle release).</para>
/// <para>A cross-thread return (rent on A, return on B) works: the object joins B's stack, and when
/// B's stack fills, the surplus spills to the shared tier where A refills from. Its cost is one
/// shared-tier visit per batch.</para>
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
    private Gen2TrimGate _gen2Gate; // the gen-2 callback's only (one callback at a time)
    private int _disposed;
    // The shared tier and the list of stacks, guarded by _lock.
    private readonly Lock _lock = new();
    private Slot[] _shared;
    private int _sharedCount;
    private long _sharedOperations;
    private readonly List<Local> _locals = [];
    // Σ credit of every stack + _sharedCount; changed only through Interlocked (see Reserve/Release).
    private int _budget;
    // Counters of stacks whose thread has exited, and of work done without a stack (under _lock or Interlocked).
    private long _retiredRents, _retiredLocalHits, _retiredTransfers, _retiredCreations, _retiredDrops, _retiredTrimmed;
    // Drops counted without a stack; idle objects the pool itself released (shared tier, quiet threads' stacks).
    private long _orphanDrops, _trimmedByPool;
    // Idle release (see SemiLocalPool.Trimming.cs): the timer (null when off or when a buffer manager
    // drives the release), and the rents of the last idle period (the timer's ticks never overlap).
    private readonly IdleReleaseTimer? _idleTimer;
    private RentWindow _idleWindow;

    /// <summary>Creates a pool whose objects come from <paramref name="factory"/> (nothing is reset on return), with default options.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    public SemiLocalPool(Func<T> factory)
        : this(factory, options: null)
    {
    }

    /// <summary>Creates a pool with <paramref name="policy"/> and default options.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    public SemiLocalPool(PoolPolicy<T> policy)
        : this(policy, options: null)
    {
    }

    /// <summary>Creates a pool whose objects come from <paramref name="factory"/> (nothing is reset on return), with <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public SemiLocalPool(Func<T> factory, PoolOptions? options)
        : this(PoolPolicies.Create(factory ?? throw new ArgumentNullException(nameof(factory))), options)
    {
    }

    /// <summary>Creates a pool with <paramref name="policy"/> and <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public SemiLocalPool(PoolPolicy<T> policy, PoolOptions? options)
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
        _gen2Gate = new Gen2TrimGate(options.TimeProvider, options.Gen2TrimInterval);
        // Always registered: with trimming off it only watches for the pool being collected without
        // Dispose, then forgets every thread's stack and frees the slot id. The hook holds the stacks,
        // the lock and the lease, never the pool.
        var locals = _locals;
        var gate = _lock;
        var lease = _lease;
        Gen2GcCallback.Register(static pool => ((SemiLocalPool<T>)pool).OnGen2(), this, () => ForgetStacks(locals, gate, lease));
        if (register) PoolMetrics.Register(this);
        _idleTimer = IdleReleaseTimer.Start(this, static pool => ((SemiLocalPool<T>)pool).OnIdleCheck(), options.ReleaseIdleAfter, options.TimeProvider);
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
    /// purpose: a return compares at most 8 references inline, so the check's cost is bounded however many
    /// idle objects the stack holds.</para>
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
    /// <see cref="PoolOptions.LocalCapacity"/> is: a scan of a full stack would be vector compares behind a call.</remarks>
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

    [MethodImpl(MethodImplOptions.NoInlining)]
    private T RentSlow(Local? local)
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            if (local is not null) EmptyOwnStack(local, countAsTrim: false); // a return that raced Dispose may have left objects here
            ThrowHelper.ThrowPoolDisposed(s_kind, Name);
        }
        local ??= CreateLocal();
        ReopenIfReleased(local);
        ServeTrimRequest(local);
        AssertLocal(local);
        // A trim request sent us here with objects still on the stack (count > 0): serve from it.
        if (local.TryPop(out T? top)) return top;
        int taken = 0;
        lock (_lock)
        {
            taken = Math.Min(_batch, _sharedCount);
            if (taken > 0)
            {
                _sharedCount -= taken;
                Array.Copy(_shared, _sharedCount, local.Items, 0, taken);
                Array.Clear(_shared, _sharedCount, taken);
                _sharedOperations++;
            }
        }
        if (taken > 0)
        {
            // The objects left the shared count (budget -taken) and need credit on this stack (budget +growth).
            int newCredit = Math.Max(local.Credit, taken);
            Release(taken - (newCredit - local.Credit));
            local.Credit = newCredit;
            Volatile.Write(ref local.Count, taken - 1);
            // The refill was stored after Dispose (or an idle release) may have read this stack's count:
            // look for Closed after publishing the count (the hand-shake of TryPop/TryPush).
            if (Volatile.Read(ref local.Closed) != 0)
            {
                T last = local.Items[taken - 1].Value!; // above Count: never visible to a drain
                local.Items[taken - 1].Value = null;
                local.DrainClosed();
                if (Volatile.Read(ref _disposed) != 0)
                {
                    PoolDrop.Drop(last);
                    ThrowHelper.ThrowPoolDisposed(s_kind, Name);
                }
                // An idle release closed the stack after our reopen: the refill went with it (its credit
                // is given back when the owner serves the release's trim request); this rent keeps the last.
                local.SharedTransfers++;
                local.SlowRents++;
                return last;
            }
            PublishLimit(local);
            local.SharedTransfers++;
            local.SlowRents++;
            T item = local.Items[taken - 1].Value!;
            local.Items[taken - 1].Value = null;
            AssertLocal(local);
            return item;
        }
        // Nothing idle anywhere. The stack ran dry: give its unused credit back so other threads can
        // retain (credit is the owner's; Limit = 0 sends our next return to the slow path, which reserves again).
        if (local.Credit > 0)
        {
            Release(local.Credit);
            local.Credit = 0;
            local.Limit = 0; // owner-only store; a trimmer only ever stores 0 too
            AssertLocal(local);
        }
        // Create one, outside any lock (a throwing factory changes nothing).
        T created = _policy.Create();
        local.Creations++;
        local.SlowRents++;
        return created;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(Local? local, T item, bool scan)
    {
        // First of all: a trim request or Dispose below would drop (dispose) the copy the stack holds, then store the object again.
        if (scan && local is not null && local.Holds(item))
        {
            RefuseDuplicate(local, item);
            return; // already on this stack: keeping it twice would hand it to two renters
        }
        if (Volatile.Read(ref _disposed) != 0)
        {
            if (local is not null) EmptyOwnStack(local, countAsTrim: false);
            Interlocked.Increment(ref _orphanDrops); // pool-level counter: the stack may be gone
            PoolDrop.Drop(item);
            return;
        }
        local ??= CreateLocal();
        ReopenIfReleased(local);
        ServeTrimRequest(local);
        if (local.Count == local.Credit && local.Credit < _localCapacity)
        {
            local.Credit += Reserve(Math.Min(_batch, _localCapacity - local.Credit));
        }
        if (local.Count == _localCapacity)
        {
            SpillToShared(local);
        }
        if (local.Count < local.Credit)
        {
            local.Items[local.Count++].Value = item;
            PublishLimit(local);
            // PublishLimit's Interlocked.Exchange is a full fence before this load; Dispose sets _disposed
            // with Interlocked.Exchange before its lock and RequestTrim pass. So either Dispose's trim
            // request reached this stack after our Limit store (Limit is 0 again), or we see _disposed
            // here: a stack created after, or a request consumed by, Dispose never keeps a later return.
            if (Volatile.Read(ref _disposed) != 0) EmptyOwnStack(local, countAsTrim: false);
            // The same fence orders the plain count store above before this load: an idle release stores
            // Closed, runs a process-wide barrier, then reads the count. Either it saw our count (and took
            // the object), or we see Closed and empty our own stack (exchanges both sides: taken once).
            else if (Volatile.Read(ref local.Closed) != 0) EmptyOwnStack(local, countAsTrim: true);
            AssertLocal(local);
            return;
        }
        PublishLimit(local);
        local.Drops++; // over the global cap
        PoolDrop.Drop(item);
    }

    /// <summary>Re-opens the fast return path up to the stack's credit, unless a trim request is pending.</summary>
    private static void PublishLimit(Local local)
    {
        // Full fence: orders this store before the TrimRequested load below. The trimmer stores
        // TrimRequested then Limit = 0, so either we see its request or its Limit = 0 lands after ours.
        Interlocked.Exchange(ref local.Limit, local.Credit);
        if (Volatile.Read(ref local.TrimRequested) != 0) local.Limit = 0;
    }

    /// <summary>
    /// Moves the older half of the (full) stack to the shared tier; the stack keeps its credit, so the
    /// shared tier needs budget. The older half, not the top: the newest objects stay where the
    /// duplicate scan of the next returns looks (and where this thread's next rents take them, still in its cache).
    /// </summary>
    private void SpillToShared(Local local)
    {
        int move = Reserve(Math.Max(1, _localCapacity / 2));
        if (move == 0) return;
        List<T>? released = null;
        lock (_lock)
        {
            if (Volatile.Read(ref _disposed) != 0)
            {
                Release(move); // Dispose has drained the shared tier: keep the objects on the stack, where its drain or the owner's finds them
                return;
            }
            if (Volatile.Read(ref local.Closed) != 0)
            {
                // An idle release closed the stack after our reopen and may have taken its slots (its
                // drain holds this lock, so it is done): copying them would put nulls in the shared tier.
                // We are the owner and hold the lock: reopen here; what the stack still held is released.
                Release(move);
                released = ReopenLocked(local);
            }
            else
            {
                EnsureSharedCapacity(_sharedCount + move);
                var items = local.Items;
                int keep = local.Count - move;
                Array.Copy(items, 0, _shared, _sharedCount, move);
                _sharedCount += move;
                // The slots are shifted under the lock: Dispose's drain of a live stack (DrainLiveStacks) and an
                // idle release's take the same lock, and each closes the stack (Dispose sets _disposed first,
                // both seen above) before its drain, so no drain runs until the stack is consistent again.
                Array.Copy(items, move, items, 0, keep);
                Array.Clear(items, keep, move);
                local.Count = keep;
                _sharedOperations++;
            }
        }
        if (released is not null)
        {
            DropAll(released, quietly: true);
            return;
        }
        local.SharedTransfers++;
        AssertLocal(local);
    }

    private void EnsureSharedCapacity(int needed)
    {
        if (needed > _shared.Length)
        {
            Array.Resize(ref _shared, Math.Min(_maxRetained, Math.Max(needed, _shared.Length * 2)));
        }
    }

    private Local CreateLocal()
    {
        var local = new Local(_token, _localCapacity, Thread.CurrentThread);
        List<T>? orphans;
        lock (_lock)
        {
            orphans = ReclaimExitedThreadsLocked();
            if (Volatile.Read(ref _disposed) != 0) local.Closed = 1; // created after Dispose's pass: closed from the start
            _locals.Add(local);
        }
        DropAll(orphans, quietly: false);
        ThreadSlots.Set(_slotId, local);
        return local;
    }

    /// <summary>Takes up to <paramref name="wanted"/> slots of the global budget; returns how many it got.</summary>
    private int Reserve(int wanted)
    {
        int current = Volatile.Read(ref _budget);
        while (true)
        {
            int grant = Math.Min(wanted, _maxRetained - current);
            if (grant <= 0) return 0;
            // The CAS is the only ordering needed: it keeps Σ credit + shared ≤ cap against other reservers.
            int seen = Interlocked.CompareExchange(ref _budget, current + grant, current);
            if (seen == current) return grant;
            current = seen;
        }
    }

    private void Release(int slots)
    {
        if (slots != 0) Interlocked.Add(ref _budget, -slots); // budget only; no other data is published by it
    }

    /// <summary>Moves every item of the shared stack into <paramref name="dropped"/> and gives its slots back to the budget; how many. Under <see cref="_lock"/>.</summary>
    private int TakeSharedLocked(List<T> dropped)
    {
        int taken = _sharedCount;
        for (int i = 0; i < taken; i++) dropped.Add(_shared[i].Value!);
        Array.Clear(_shared, 0, taken);
        Release(taken);
        _sharedCount = 0;
        return taken;
    }

    private static void DropAll(List<T>? items, bool quietly)
    {
        if (items is null) return;
        if (!quietly)
        {
            PoolDrop.DropAll(items); // every item is dropped; then the first failure (or all of them) is rethrown
            return;
        }
        foreach (var item in items) PoolDrop.DropQuietly(item);
    }

    /// <inheritdoc/>
    /// <remarks>
    /// Sums the counters of every thread's stack (read without stopping the owners, so a busy pool's
    /// figures are approximate) and the shared tier's. Thread safety: safe from any thread.
    /// </remarks>
    public PoolStatistics GetStatistics()
    {
        lock (_lock)
        {
            long rents = _retiredRents, hits = _retiredLocalHits, transfers = _retiredTransfers, creations = _retiredCreations;
            long drops = _retiredDrops + Volatile.Read(ref _orphanDrops), trimmed = _retiredTrimmed + _trimmedByPool;
            long retained = _sharedCount;
            foreach (var local in _locals)
            {
                // Owner-written counters, read racily: each read is atomic on 64-bit platforms.
                rents += Volatile.Read(ref local.LocalHits) + Volatile.Read(ref local.SlowRents);
                hits += Volatile.Read(ref local.LocalHits);
                transfers += Volatile.Read(ref local.SharedTransfers);
                creations += Volatile.Read(ref local.Creations);
                drops += Volatile.Read(ref local.Drops);
                trimmed += Volatile.Read(ref local.Trimmed);
                // A closed stack's count is stale: Dispose drained its slots without writing the owner's count.
                if (Volatile.Read(ref local.Closed) == 0) retained += Volatile.Read(ref local.Count);
            }
            return new PoolStatistics
            {
                Rents = rents, LocalHits = hits, SharedTransfers = transfers, Creations = creations, Drops = drops, Trimmed = trimmed, Retained = retained,
            };
        }
    }

    /// <summary>
    /// Stops the pool: idle objects it can reach are dropped (disposed if <see cref="IDisposable"/>),
    /// later returns are dropped, later rents throw <see cref="ObjectDisposedException"/>. Every idle
    /// object is dropped, those on the stacks of other live threads included (objects rented and not
    /// yet returned are the caller's: their later return drops them).
    /// </summary>
    /// <remarks>Idempotent. If objects' Dispose methods throw, every other object is still dropped and the
    /// pool is still disposed; then the exception is rethrown (an <see cref="AggregateException"/> when
    /// several objects of one batch failed; if the calling thread's own stack fails too, its exception wins).
    /// Thread safety: safe from any thread; a return racing with Dispose drops its object on its own thread (see <see cref="DrainLiveStacks"/>).</remarks>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return; // the first caller disposes; the flag is read by every slow path
        _idleTimer?.Dispose();
        List<T>? dropped;
        lock (_lock)
        {
            dropped = ReclaimExitedThreadsLocked() ?? [];
            _retiredDrops += TakeSharedLocked(dropped);
            foreach (var local in _locals)
            {
                Volatile.Write(ref local.Closed, 1);
                RequestTrim(local);
            }
        }
        DrainLiveStacks(dropped);
        // A throwing object Dispose neither stops the other drops nor leaves the pool registered or its slot id taken.
        try
        {
            DropAll(dropped, quietly: false);
        }
        finally
        {
            try
            {
                var own = System.Runtime.CompilerServices.Unsafe.As<Local?>(ThreadSlots.Get(_slotId, _token));
                if (own is not null) EmptyOwnStack(own, countAsTrim: false);
            }
            finally
            {
                PoolMetrics.Unregister(this);
                _lease.Release();
            }
        }
    }

    /// <summary>
    /// Dispose's pass over the stacks of threads that are still alive: every stack has been marked
    /// <c>Closed</c>; this takes what they hold into <paramref name="dropped"/>.
    /// </summary>
    /// <remarks>
    /// Memory ordering: an asymmetric Dekker hand-shake. An owner publishes its stack change (a claim of
    /// the top slot in <c>TryPop</c>, a new count in <c>TryPush</c> or a refill) and then reads
    /// <c>Closed</c>, with no fence on its fast path. Here, <c>Closed = 1</c> is stored for every stack,
    /// then <see cref="Interlocked.MemoryBarrierProcessWide"/> makes every processor serialise (each
    /// owner's earlier stores become visible, and its later loads see <c>Closed</c>), and only then the
    /// counts are read. So for each owner operation either this pass sees its count, or the owner sees
    /// <c>Closed</c> and drains its own stack. Both sides take slots with
    /// <see cref="Interlocked.Exchange{T}(ref T, T)"/>, so an object both reach is dropped once, and a
    /// slot an owner has claimed (above the count this pass read) is never taken from under it.
    /// </remarks>
    private void DrainLiveStacks(List<T> dropped)
    {
        Interlocked.MemoryBarrierProcessWide();
        lock (_lock)
        {
            foreach (var local in _locals)
            {
                var taken = local.TakeAll(Volatile.Read(ref local.Count));
                if (taken is null) continue;
                dropped.AddRange(taken);
                _retiredDrops += taken.Count;
            }
        }
    }
}
