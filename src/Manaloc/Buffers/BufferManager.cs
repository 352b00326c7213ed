using System.Buffers;
using System.Numerics;
using System.Runtime.CompilerServices;
using Manaloc.Diagnostics;
using Manaloc.Pooling;

namespace Manaloc.Buffers;

/// <summary>
/// Byte buffers by power-of-two size class (16 B up to <see cref="BufferManagerOptions.MaxBufferSize"/>, 64 MiB by default),
/// each class a semi-local pool: per thread, one hot buffer and a stack, used without synchronisation, over a shared, locked tier.
/// An <see cref="ArrayPool{T}"/> of bytes, so it drops into any code that takes one.
/// </summary>
/// <remarks>
/// <para>Why: <see cref="ArrayPool{T}.Shared"/> keeps one buffer per size per thread and per-core
/// stacks beyond that; this manager keeps, per thread and class, one hot buffer (found with one
/// thread-static lookup) and a small stack behind it (so a thread that holds several buffers of one
/// size at once still reuses without locking), caps what each class's stacks and shared tier retain
/// across all threads (plus at most one hot buffer per class per thread), publishes statistics, and
/// can detect misuse.</para>
/// <para>ArrayPool contract, exactly as <see cref="ArrayPool{T}.Shared"/> behaves: <c>Rent(0)</c>
/// returns an empty array; a negative length throws <see cref="ArgumentOutOfRangeException"/>; a
/// length above the largest class is a plain allocation, and such an array is silently dropped on
/// return, as is an empty array; returning an array whose length lies in the pooled range but is not
/// a class size throws <see cref="ArgumentException"/>; <c>clearArray</c> zeroes the array before it is
/// stored. A rented array may be longer than asked for, and its contents are unspecified.</para>
/// <para>Double return. <see cref="ArrayPool{T}.Shared"/> does not detect it: the array is stored
/// twice and later handed to two renters. Here, outside debug mode, a return of an array already held
/// by the returning thread (its hot buffer or its stack: the usual <c>Return(a); Return(a);</c> bug)
/// is refused, counted as a drop and reported as a DoubleReturn event, at the cost of one compare or a
/// scan of at most <see cref="BufferManagerOptions.BuffersPerThread"/> references. A double return that crosses
/// threads, or happens after the array was rented again, cannot be seen without per-buffer state; in
/// debug mode (<see cref="BufferManagerOptions.DebugMode"/>) every outstanding buffer is tracked and any
/// double or foreign return throws <see cref="InvalidOperationException"/> before the pool is touched.</para>
/// <para>Thread safety: every member is safe from any thread; a buffer may be returned on a thread other
/// than the renter's.</para>
/// </remarks>
public sealed partial class BufferManager : ArrayPool<byte>, IDisposable, IPoolStatisticsSource
{
    private const int MinimumSize = 16;
    private readonly PoolTier<byte[]>[] _classes;
    private readonly PoolDebugTracker<byte[]>? _debug;
    private readonly bool _poison; // PoisonReturnedBuffers: read on the slow return path only (the fast paths never run for such a manager)
    private readonly SlotLease _lease;

    /// <summary>This manager's slot lease (tests: is it given back once the manager is gone?).</summary>
    internal SlotLease Lease => _lease;
    private readonly bool _trimAfterGen2;
    private Gen2TrimGate _gen2Gate; // the gen-2 callback's only (one callback at a time, on the finalizer thread)
    private readonly int _slotId;
    private readonly long _token;
    // The token the fast paths look for: _token, or -1 in debug and poison modes (never matches: their work stays on the slow paths).
    private readonly long _fastToken;
    private int _disposed;
    private readonly bool _isShared;
    // Every thread's front tier, for statistics, trimming and exited-thread cleanup; guarded by _cachesLock.
    private readonly Lock _cachesLock = new();
    private readonly List<BufferThreadCache> _caches = [];
    // Per class: counters of exited threads' caches, hot buffers trimmed (under _cachesLock).
    private readonly long[] _retiredRents, _retiredReturns, _retiredDrops, _hotTrimmed;
    // Idle release: the timer (null when off) and each class's rents over the last idle period (ticks never overlap).
    private readonly IdleReleaseTimer? _idleTimer;
    private readonly RentWindow[] _idleWindows;

    /// <summary>Creates a buffer manager with <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public BufferManager(BufferManagerOptions? options = null)
        : this(options, isShared: false)
    {
    }

    private BufferManager(BufferManagerOptions? options, bool isShared)
    {
        _isShared = isShared;
        options ??= new BufferManagerOptions();
        options.Validate();
        Name = options.Name;
        MaxBufferSize = options.MaxBufferSize;
        _debug = options.DebugMode ? new PoolDebugTracker<byte[]>(Name, $"BufferManager '{Name}'") : null;
        _leakReported = options.LeakReported;
        _poison = options.PoisonReturnedBuffers;
        _classes = new PoolTier<byte[]>[SelectClass(options.MaxBufferSize) + 1];
        for (int i = 0; i < _classes.Length; i++)
        {
            int size = MinimumSize << i;
            var (retained, perThread, batch) = ClassLimits(options, size);
            var classOptions = new PoolOptions
            {
                Name = $"{Name}/{size}",
                BatchSize = batch,
                LocalCapacity = perThread,
                MaxRetained = retained,
                TrimAfterGen2 = options.TrimAfterGen2,
                Gen2TrimInterval = Gen2TrimGate.BufferInterval,
                TimeProvider = options.TimeProvider, // the gen-2 gate's clock (the idle timer is the manager's own)
                ReleaseIdleAfter = Timeout.InfiniteTimeSpan, // the manager's own timer releases every class (see OnIdleCheck)
            };
            _classes[i] = new PoolTier<byte[]>(new BufferPolicy(size, options.PinnedArrays), classOptions);
        }
        _retiredRents = new long[_classes.Length];
        _retiredReturns = new long[_classes.Length];
        _retiredDrops = new long[_classes.Length];
        _hotTrimmed = new long[_classes.Length];
        _idleWindows = new RentWindow[_classes.Length];
        _lease = ThreadSlots.Lease();
        _slotId = _lease.Id;
        _token = _lease.Token;
        _fastToken = _debug is null && !_poison ? _token : -1;
        _trimAfterGen2 = options.TrimAfterGen2;
        _gen2Gate = new Gen2TrimGate(options.TimeProvider, Gen2TrimGate.BufferInterval);
        ReleaseIdleAfter = options.ReleaseIdleAfter;
        TimeProvider = options.TimeProvider;
        MaxRetainedBytesPerClass = options.MaxRetainedBytesPerClass;
        // Always registered: with trimming off it only watches for the manager being collected without
        // Dispose, then forgets every thread's hot buffers and frees the slot id (it holds the caches, not the manager).
        var caches = _caches;
        var cachesLock = _cachesLock;
        var lease = _lease;
        Gen2GcCallback.Register(static manager => ((BufferManager)manager).OnGen2(), this, () => ForgetCaches(caches, cachesLock, lease));
        PoolMetrics.Register(this);
        _idleTimer = IdleReleaseTimer.Start(this, static manager => ((BufferManager)manager).OnIdleCheck(), options.ReleaseIdleAfter, options.TimeProvider);
    }

    /// <summary>
    /// The process-wide manager (name <c>buffers.shared</c>, default options), for code that has no
    /// manager of its own. Hides <see cref="ArrayPool{T}.Shared"/>: through this type, <c>Shared</c> is
    /// Manaloc's pool; through <c>ArrayPool&lt;byte&gt;.Shared</c> it is still the runtime's.
    /// </summary>
    /// <remarks>Its <see cref="Dispose"/> does nothing: the shared manager lives as long as the process.</remarks>
    public static new BufferManager Shared => SharedHolder.Instance;

    /// <summary>Creates <see cref="Shared"/> on first use only (not when any manager is constructed), thread-safely (type initialisation).</summary>
    private static class SharedHolder
    {
        public static readonly BufferManager Instance = new(new BufferManagerOptions { Name = "buffers.shared" }, isShared: true);
    }

    /// <summary>The manager's name (metrics tag).</summary>
    public string Name { get; }

    /// <summary>The manager's name and idle buffers: <c>BufferManager 'buffers' (12 retained)</c>, or <c>(disposed)</c>.</summary>
    /// <remarks>Sums the statistics of every class (see <see cref="GetStatistics()"/>). Thread safety: safe from any thread.</remarks>
    public override string ToString()
    {
        bool disposed = Volatile.Read(ref _disposed) != 0;
        return PoolText.Describe(nameof(BufferManager), Name, disposed, disposed ? 0 : GetStatistics().Retained);
    }

    /// <summary>Debug mode: where a <see cref="RentedBuffer"/> never disposed is reported (besides the BufferLeak event).</summary>
    private readonly Action<RentedBufferLeak>? _leakReported;

    string IPoolStatisticsSource.Kind => "buffer-manager";

    bool IPoolStatisticsSource.CountsBytes => true;

    /// <summary>The largest pooled buffer size.</summary>
    public int MaxBufferSize { get; }

    /// <summary>Whether returned arrays are filled with <see cref="BufferManagerOptions.PoisonByte"/> (<see cref="BufferManagerOptions.PoisonReturnedBuffers"/>).</summary>
    internal bool PoisonsReturnedBuffers => _poison;

    /// <summary>The idle period of <see cref="BufferManagerOptions.ReleaseIdleAfter"/> (a <see cref="BufferMemoryPool"/>'s owner tiers release on the same schedule).</summary>
    internal TimeSpan ReleaseIdleAfter { get; }

    /// <summary>The clock of the idle release (<see cref="BufferManagerOptions.TimeProvider"/>).</summary>
    internal TimeProvider TimeProvider { get; }

    /// <summary>The retention cap per size class (<see cref="BufferManagerOptions.MaxRetainedBytesPerClass"/>).</summary>
    internal long MaxRetainedBytesPerClass { get; }

    /// <summary>Whether idle buffers are trimmed after gen-2 collections (<see cref="BufferManagerOptions.TrimAfterGen2"/>).</summary>
    internal bool TrimsAfterGen2 => _trimAfterGen2;

    /// <summary>
    /// The cache of the manager whose slow path this thread ran last: the fast paths' one thread-static
    /// load and token compare (as <see cref="ArrayPool{T}.Shared"/>'s per-thread buckets); other
    /// managers' fast paths find their cache through <see cref="ThreadSlots"/> (inlined). Never a
    /// debug-mode manager's cache, and debug managers look for a token no cache has, so the fast paths
    /// need no debug check (a poisoning manager looks for no token either, but keeps its hot buffers: see <see cref="RentSlow"/>).
    /// </summary>
    [ThreadStatic]
    private static BufferThreadCache? t_last;

    /// <summary>Rents a buffer of at least <paramref name="minimumLength"/> bytes (rounded up to a power of two ≥ 16).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="minimumLength"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The manager was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public override byte[] Rent(int minimumLength)
    {
        var cache = t_last;
        if (cache is null || cache.Token != _fastToken) cache = Unsafe.As<BufferThreadCache?>(ThreadSlots.Get(_slotId, _fastToken)); // another manager was last
        if (cache is not null)
        {
            // No disposed check here: Dispose empties every hot slot and later returns never fill one; only a
            // return racing Dispose (past its check, before TrimHot) can, and then one rent may get that
            // buffer instead of ObjectDisposedException (harmless: byte arrays need no disposal).
            int index = SelectClass(minimumLength);
            var slots = cache.Slots;
            if ((uint)index < (uint)slots.Length) // 0 and negative lengths map past the last class
            {
                ref var slot = ref slots[index];
                byte[]? hot = slot.Hot;
                if (hot is not null)
                {
                    slot.Hot = null;
                    slot.Rents++;
                    return hot;
                }
            }
        }
        return RentSlow(minimumLength);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private byte[] RentSlow(int minimumLength)
    {
        // Every rent that misses the hot slot checks here, unpooled sizes and empty arrays included: after
        // Dispose a rent throws whatever its size (the hot slots were emptied by Dispose).
        if (Volatile.Read(ref _disposed) != 0) ThrowHelper.ThrowPoolDisposed(nameof(BufferManager), Name);
        int index = SelectClass(minimumLength);
        if ((uint)index >= (uint)_classes.Length) return RentUnpooled(minimumLength);
        var cache = FindCache();
        if (cache is not null && _debug is null)
        {
            ref var slot = ref cache.Slots[index];
            byte[]? hot = slot.Hot; // this thread used another manager in between: its hot buffer is still here
            if (hot is not null)
            {
                slot.Hot = null;
                slot.Rents++;
                return hot;
            }
        }
        return RentFromClass(cache, index);
    }

    /// <summary>The calling thread's cache through its slots (made the fast paths' last one), or null.</summary>
    private BufferThreadCache? FindCache()
    {
        var cache = Unsafe.As<BufferThreadCache?>(ThreadSlots.Get(_slotId, _token));
        if (cache is not null && _debug is null) t_last = cache;
        return cache;
    }

    private byte[] RentFromClass(BufferThreadCache? cache, int index)
    {
        byte[] buffer = _classes[index].Rent();
        if (cache is not null)
        {
            ref var slot = ref cache.Slots[index];
            if (slot.Stack.IsNone) slot.Stack = _classes[index].CurrentStack(); // the rent may have created this thread's stack
            slot.StackMayHoldBuffers = slot.Stack.MayHoldItems; // a refill from the shared tier may have filled it
        }
        _debug?.OnRent(buffer);
        return buffer;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static byte[] RentUnpooled(int minimumLength)
    {
        if (minimumLength == 0) return [];
        if (minimumLength < 0) ThrowHelper.ThrowArgumentOutOfRange(nameof(minimumLength), minimumLength, "A buffer length must not be negative.");
        return GC.AllocateUninitializedArray<byte>(minimumLength);
    }

    /// <summary>Returns <paramref name="array"/> for reuse, zeroing it first when <paramref name="clearArray"/> is true.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="array"/> is null.</exception>
    /// <exception cref="ArgumentException">The length is in the pooled range but not a class size: the array did not come from this pool.</exception>
    /// <exception cref="InvalidOperationException">Debug mode only: a double or foreign return.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public override void Return(byte[] array, bool clearArray = false)
    {
        if (array is null) ThrowHelper.ThrowArgumentNull(nameof(array));
        var cache = t_last;
        if (cache is null || cache.Token != _fastToken) cache = Unsafe.As<BufferThreadCache?>(ThreadSlots.Get(_slotId, _fastToken));
        if (cache is not null && _disposed == 0)
        {
            int length = array.Length;
            int index = SelectClass(length);
            var slots = cache.Slots;
            if ((uint)index < (uint)slots.Length && length == MinimumSize << index)
            {
                ref var slot = ref slots[index];
                // Hot only while the stack is empty, so no buffer is kept twice; a full hot slot (perhaps
                // holding this very array: a double return) is the slow path's business.
                if (slot.Hot is null && !slot.StackMayHoldBuffers)
                {
                    if (clearArray) Array.Clear(array);
                    slot.Hot = array;
                    slot.Returns++; // the rented bytes: owner-only counter, like Rents
                    return;
                }
            }
        }
        ReturnSlow(array, clearArray);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(byte[] array, bool clearArray)
    {
        int length = array.Length;
        int index = SelectClass(length);
        if ((uint)index >= (uint)_classes.Length)
        {
            if (_poison) Poison(array); // never pooled, but a late reader of it is the same bug
            return; // empty arrays and arrays above the largest class were never pooled: dropped, as ArrayPool.Shared does
        }
        if (length != MinimumSize << index) ThrowNotFromPool();
        _debug?.OnReturn(array); // before the fill: a double or foreign return throws with the array untouched
        if (_poison) Poison(array); // before the array is stored: no renter sees the fill happen
        else if (clearArray) Array.Clear(array);
        var cache = FindCache();
        if (cache is not null && _debug is null && Volatile.Read(ref _disposed) == 0)
        {
            ref var slot = ref cache.Slots[index];
            var hot = slot.Hot;
            if (hot is null)
            {
                if (!slot.StackMayHoldBuffers) // hot only while the stack is empty: no buffer is kept twice
                {
                    slot.Hot = array;
                    slot.Returns++;
                    return;
                }
            }
            else if (ReferenceEquals(hot, array))
            {
                RefuseDoubleReturn(ref slot, array);
                return;
            }
        }
        ReturnToClass(cache, index, array);
    }

    /// <summary>Rents a buffer of at least <paramref name="minimumLength"/> bytes that returns itself on Dispose.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="minimumLength"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The manager was disposed.</exception>
    /// <remarks>In debug mode (<see cref="BufferManagerOptions.DebugMode"/>) the stack of this call is kept, and a
    /// rented buffer that the GC finds unreachable before it was disposed is reported with it: the
    /// <c>BufferLeak</c> event and <see cref="BufferManagerOptions.LeakReported"/>.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)] // the leak stack starts at the caller of this method
    public RentedBuffer RentBuffer(int minimumLength)
    {
        var array = Rent(minimumLength);
        var tracker = _debug is null ? null : new BufferLeakTracker(Name, minimumLength, new System.Diagnostics.StackTrace(1, fNeedFileInfo: true).ToString(), _leakReported);
        return new(this, array, minimumLength, tracker);
    }

    /// <summary>Fills <paramref name="array"/> with <see cref="BufferManagerOptions.PoisonByte"/> (poison mode).</summary>
    internal static void Poison(byte[] array) => array.AsSpan().Fill(BufferManagerOptions.PoisonByte);

    private static void ThrowNotFromPool()
        => ThrowHelper.ThrowArgument("array", "The buffer's length is not one of this pool's size classes, so it did not come from this pool.");

    private void ReturnToClass(BufferThreadCache? cache, int index, byte[] array)
    {
        var pool = _classes[index];
        pool.Return(array);
        if (Volatile.Read(ref _disposed) != 0) return;
        cache ??= CreateCache();
        ref var slot = ref cache.Slots[index];
        slot.Returns++; // kept or dropped by the class pool, the buffer is no longer rented
        if (slot.Stack.IsNone) slot.Stack = pool.CurrentStack();
        slot.StackMayHoldBuffers = slot.Stack.MayHoldItems; // the return may have been dropped (cap) instead
    }

    private void RefuseDoubleReturn(ref BufferThreadCache.ClassSlot slot, byte[] array)
    {
        slot.Drops++;
        ManalocEventSource.Log.DoubleReturn(Name, $"byte[{array.Length}]");
    }

    private BufferThreadCache CreateCache()
    {
        var cache = new BufferThreadCache(_token, Thread.CurrentThread, _classes.Length);
        lock (_cachesLock)
        {
            RemoveExitedThreadsLocked(); // an exited thread's hot buffers go with its cache
            _caches.Add(cache);
        }
        ThreadSlots.Set(_slotId, cache);
        if (_debug is null) t_last = cache; // debug mode keeps every operation on the slow path, where it tracks
        return cache;
    }

    /// <summary>The size class of a length: 0 for 1..16, 1 for 17..32, …; out of range for 0, negatives and huge lengths.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int SelectClass(int length) => BitOperations.Log2((uint)(length - 1) | (MinimumSize - 1)) - 3;

    /// <summary>
    /// What one size class keeps: <see cref="BufferManagerOptions.MaxRetainedBytesPerClass"/> worth of
    /// buffers (at most 4,096), of which a thread's stack holds up to
    /// <see cref="BufferManagerOptions.BuffersPerThread"/>. Classes up to 2 MiB keep at least
    /// BuffersPerThread; larger ones at least one (a 64 MiB class under the default 16 MiB cap keeps one
    /// in its stacks and shared tier), so a large rent after warm-up allocates nothing without
    /// retaining many copies.
    /// </summary>
    internal static (int Retained, int PerThread, int Batch) ClassLimits(BufferManagerOptions options, int size)
    {
        long byBytes = options.MaxRetainedBytesPerClass / size;
        int floor = size <= LargeClassBytes ? options.BuffersPerThread : 1;
        int retained = (int)Math.Clamp(byBytes, floor, 4096);
        int perThread = Math.Min(options.BuffersPerThread, retained);
        return (retained, perThread, Math.Min(options.BatchSize, perThread));
    }

    /// <summary>Classes above this size may keep fewer than BuffersPerThread buffers (down to one) when the byte cap says so.</summary>
    private const int LargeClassBytes = 1 << 21;

    /// <summary>The counters of every size class added up, with the bytes retained and rented.</summary>
    /// <remarks>Approximate while threads are busy (read without stopping them); exact once they are quiet. Thread safety: safe from any thread.</remarks>
    public PoolStatistics GetStatistics()
    {
        var total = default(PoolStatistics);
        for (int i = 0; i < _classes.Length; i++) total += ClassStatistics(i);
        return total;
    }

    /// <summary>The counters of the size class that serves <paramref name="size"/>-byte rents, with its bytes retained and rented.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is not between 1 and <see cref="MaxBufferSize"/>.</exception>
    /// <remarks>Thread safety: safe from any thread.</remarks>
    public PoolStatistics GetStatistics(int size)
    {
        int index = SelectClass(size);
        if (size < 1 || (uint)index >= (uint)_classes.Length)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(size), size, $"The size must be between 1 and {MaxBufferSize}.");
        return ClassStatistics(index);
    }

    /// <summary>
    /// Class <paramref name="index"/>: its pool's counters plus its hot buffers' (every thread's, and those of
    /// exited threads), and its bytes: retained = idle buffers × size, rented = (rents − returns) × size.
    /// </summary>
    private PoolStatistics ClassStatistics(int index)
    {
        var pool = _classes[index].GetStatistics();
        var hot = HotCounters(index);
        long size = (long)MinimumSize << index;
        long retained = pool.Retained + hot.Retained;
        long outstanding = Math.Max(0, pool.Rents + hot.Rents - hot.Returns); // racy reads may cross: never below 0
        return pool + new PoolStatistics { Rents = hot.Rents, LocalHits = hot.Rents, Drops = hot.Drops, Trimmed = hot.Trimmed, Retained = hot.Retained }
            with { RetainedBytes = retained * size, RentedBytes = outstanding * size };
    }

    /// <summary>The hot tier's counters of class <paramref name="index"/>, over every thread (exited ones included), and the returns of the class.</summary>
    private (long Rents, long Returns, long Drops, long Trimmed, long Retained) HotCounters(int index)
    {
        lock (_cachesLock)
        {
            long rents = _retiredRents[index], returns = _retiredReturns[index], drops = _retiredDrops[index], retained = 0;
            foreach (var cache in _caches)
            {
                ref var slot = ref cache.Slots[index];
                rents += Volatile.Read(ref slot.Rents); // owner-written counters, read racily (atomic on 64-bit)
                returns += Volatile.Read(ref slot.Returns);
                drops += Volatile.Read(ref slot.Drops);
                if (Volatile.Read(ref slot.Hot) is not null) retained++;
            }
            return (rents, returns, drops, _hotTrimmed[index], retained);
        }
    }

    /// <summary>Stops pooling: idle buffers are dropped, later returns are ignored, later rents of pooled sizes throw <see cref="ObjectDisposedException"/>.</summary>
    /// <remarks>Idempotent; does nothing on <see cref="Shared"/>. Thread safety: safe from any thread.</remarks>
    public void Dispose()
    {
        if (_isShared) return; // the process-wide manager: code that disposes it by mistake must not break every other user
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return; // first caller only; the fast paths read the flag
        _idleTimer?.Dispose();
        TrimHot(idleOnly: false);
        foreach (var pool in _classes) pool.Dispose();
        PoolMetrics.Unregister(this);
        _lease.Release();
    }
}
