using System.Buffers;
using System.Runtime.CompilerServices;

namespace Manaloc.Collections;

/// <summary>
/// A thread-safe cache of byte keys and byte values that live in native memory, within an exact byte budget: every
/// native byte it holds (index, keys, values, headers, unused block space) counts against
/// <see cref="NativeCacheOptions.MaxBytes"/>. Reads take no lock; writers take one lock; eviction is W-TinyLFU (scan-resistant); expiration
/// follows the options' <see cref="TimeProvider"/>.
/// </summary>
/// <remarks>
/// <para>Why: a managed cache keeps an entry object, a key string and a value array per entry, so a full collection
/// marks every entry, and its size is counted by hand. Here entries are chains of 64-byte chunks in blocks allocated
/// up to the budget; the GC traces nothing per entry. See <c>docs/collections.md</c>.</para>
/// <para>Reads (<c>TryGet</c>, <c>Refresh</c>) copy the value out with no lock: a reader sees the old value whole, the
/// new value whole, or a miss, never a value being replaced or freed (removed entries' chunks are reused only after
/// every read that may hold them has ended; see <c>CacheStore</c>). An expired entry is never returned.</para>
/// <para>An entry larger than <see cref="NativeCacheOptions.MaxEntryBytes"/> (key, value and a 60-byte header, rounded
/// up to whole 64-byte chunks, 4 bytes of each being a link) is refused: <c>Set</c> returns false, removes the key's
/// old entry (no stale value stays), counts a refusal, and evicts nothing. Char keys are stored as their UTF-8 bytes,
/// so <c>Set("a")</c> and <c>Set("a"u8)</c> are one key; every string is a key, as in a <c>Dictionary&lt;string, T&gt;</c>:
/// a lone surrogate, which has no UTF-8 form, is stored as its 3-byte generalized UTF-8 (WTF-8) form <c>ED A0..BF xx</c>,
/// bytes no valid UTF-8 contains, so two different strings are never one key.</para>
/// <para>Dispose it: a cache the GC finds undisposed raises the <c>Leak</c> event and keeps its memory. Every member
/// throws <see cref="ObjectDisposedException"/> after <see cref="Dispose"/>.</para>
/// </remarks>
// The stack buffers are char keys' UTF-8 bytes, written before they are read (Utf8Key): zeroing 256 bytes per call is waste.
[SkipLocalsInit]
public sealed unsafe class NativeCache : IDisposable, IMeteredCache
{
    /// <summary>The smallest <see cref="NativeCacheOptions.MaxBytes"/>: the index, the directory and one 4 KiB block.</summary>
    public const long MinimumMaxBytes = CacheLayout.MinimumMaxBytes;

    /// <summary>The largest <see cref="NativeCacheOptions.MaxBytes"/> (128 GiB: chunks are addressed by 32-bit references).</summary>
    public const long MaximumMaxBytes = CacheLayout.MaximumMaxBytes;

    private const int StackKeyBytes = 256;

    // Replaced by Clear, null after Dispose, both under _writeLock; readers load it with Volatile.Read inside the ReaderGate.
    private CacheStore? _store;
    // Monitor, not System.Threading.Lock: Coyote controls Monitor.
    private readonly object _writeLock = new();
    private readonly CacheLayout _layout;
    private readonly long _maxBytes;
    private readonly long _maxEntryChunks;
    private readonly TimeProvider _clock;
    private readonly string _description;
    private readonly ReadTallies _reads = new();
    private CacheCounters _counters; // under _writeLock

    /// <summary>Creates an empty cache.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> or its <see cref="NativeCacheOptions.TimeProvider"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="NativeCacheOptions.MaxBytes"/> is below <see cref="MinimumMaxBytes"/> or above
    /// <see cref="MaximumMaxBytes"/>, or <see cref="NativeCacheOptions.MaxEntryBytes"/> is negative, between 1 and 63 (below the smallest entry), or above the space for entries.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the index.</exception>
    public NativeCache(NativeCacheOptions options)
    {
        try
        {
            if (options is null) ThrowHelper.ThrowArgumentNull(nameof(options));
            Name = options.Name;
            _description = options.Name is { } name ? $"NativeCache '{name}'" : "NativeCache";
            if (options.TimeProvider is null) ThrowHelper.ThrowArgumentNull("options.TimeProvider");
            _clock = options.TimeProvider;
            _maxBytes = options.MaxBytes;
            if (_maxBytes < MinimumMaxBytes || _maxBytes > MaximumMaxBytes)
            {
                ThrowHelper.ThrowArgumentOutOfRange("options.MaxBytes", _maxBytes,
                    $"{_description}: MaxBytes must be between {MinimumMaxBytes} (the index and one 4 KiB block) and {MaximumMaxBytes}; it counts every native byte the cache holds.");
            }
            _layout = new CacheLayout(_maxBytes);
            long maxEntryBytes = options.MaxEntryBytes;
            // Below one chunk (the smallest entry: an empty key and value) no entry could be stored: every Set would be
            // refused, silently, so such a limit is refused here instead.
            if (maxEntryBytes < 0 || maxEntryBytes is > 0 and < CacheStore.ChunkBytes || maxEntryBytes > _layout.CapacityBytes)
            {
                ThrowHelper.ThrowArgumentOutOfRange("options.MaxEntryBytes", maxEntryBytes,
                    $"{_description}: MaxEntryBytes must be 0 (the default, a sixteenth of the space for entries) or between {CacheStore.ChunkBytes} (the smallest entry: "
                    + $"an empty key and value in one {CacheStore.ChunkBytes}-byte chunk) and {_layout.CapacityBytes}, the space for entries in a budget of {_maxBytes} bytes.");
            }
            _maxEntryChunks = maxEntryBytes == 0 ? Math.Max(1, _layout.CapacityChunks / 16) : maxEntryBytes >> CacheStore.ChunkShift;
            _store = new CacheStore(_layout);
        }
        catch
        {
            GC.SuppressFinalize(this); // no store: nothing to report
            throw;
        }
        CacheMetrics.Caches.Register(this);
    }

    /// <summary>The leak report of a cache never disposed (its memory is kept).</summary>
    ~NativeCache()
    {
        if (_store is { } store) MapMetrics.ReportLeak(_description, store.Count, store.NativeBytes);
    }

    /// <summary>The name from the options.</summary>
    public string? Name { get; }

    /// <summary>The largest entry stored, in bytes as the cache counts them (whole 64-byte chunks).</summary>
    public long MaxEntryBytes => _maxEntryChunks << CacheStore.ChunkShift;

    /// <summary>Entries held (an expired entry counts until the cache removes it).</summary>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public long Count => CurrentStore.Count;

    /// <summary>The bytes an entry with a key and a value of these lengths takes, as <see cref="NativeCacheOptions.MaxEntryBytes"/>
    /// and <see cref="NativeCacheStatistics.EntryBytes"/> count it: the key, the value and a 60-byte header in 64-byte
    /// chunks of which 4 bytes are a link.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="keyLength"/> or <paramref name="valueLength"/> is negative.</exception>
    public static long EntrySize(int keyLength, int valueLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(keyLength);
        ArgumentOutOfRangeException.ThrowIfNegative(valueLength);
        return CacheStore.ChunksFor(keyLength, valueLength) << CacheStore.ChunkShift;
    }

    /// <summary>The space for entries in a budget of <paramref name="maxBytes"/> (the budget less the index, the directory of
    /// blocks and the frequency sketch): the largest <see cref="NativeCacheOptions.MaxEntryBytes"/> that budget accepts.
    /// Computed from the layout; nothing is allocated, so options can be checked without making a cache.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxBytes"/> is below <see cref="MinimumMaxBytes"/> or above <see cref="MaximumMaxBytes"/>.</exception>
    public static long SpaceForEntries(long maxBytes)
    {
        if (maxBytes < MinimumMaxBytes || maxBytes > MaximumMaxBytes)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(maxBytes), maxBytes, $"MaxBytes must be between {MinimumMaxBytes} and {MaximumMaxBytes}.");
        return new CacheLayout(maxBytes).CapacityBytes;
    }

    string IMeteredCache.Name => Name ?? "";
    long IMeteredCache.Entries => Volatile.Read(ref _store)?.Count ?? 0;
    long IMeteredCache.NativeBytes => Volatile.Read(ref _store)?.NativeBytes ?? 0;
    long IMeteredCache.Hits => _reads.Hits;
    long IMeteredCache.Misses => _reads.Misses;
    long IMeteredCache.Evictions => Volatile.Read(ref _counters.Evictions);
    long IMeteredCache.Expirations => Volatile.Read(ref _counters.Expirations);
    long IMeteredCache.Refusals => Volatile.Read(ref _counters.Refusals);

    /// <summary>The store for a counter read (managed fields only: safe outside the gate).</summary>
    private CacheStore CurrentStore
    {
        get
        {
            var store = Volatile.Read(ref _store);
            if (store is null) ThrowDisposed();
            return store;
        }
    }

    /// <summary>The counters.</summary>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public NativeCacheStatistics GetStatistics()
    {
        var store = CurrentStore;
        return new NativeCacheStatistics(store, _maxBytes, _reads.Hits, _reads.Misses, ref _counters);
    }

    // ---- Set ----

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/>, never expiring.</summary>
    /// <returns>False when refused (above <see cref="MaxEntryBytes"/>): nothing stored, the key's old entry removed.</returns>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a block; the key's entry is unchanged.</exception>
    public bool Set(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => SetCore(key, value, default, value.Length, default);

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/> for <paramref name="timeToLive"/>.</summary>
    /// <returns>False when refused (above <see cref="MaxEntryBytes"/>, or a time to live of zero or less).</returns>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a block; the key's entry is unchanged.</exception>
    public bool Set(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, TimeSpan timeToLive)
        => SetCore(key, value, default, value.Length, new NativeCacheEntryOptions { TimeToLive = timeToLive });

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/>, expiring as <paramref name="entryOptions"/> say.</summary>
    /// <returns>False when refused (above <see cref="MaxEntryBytes"/>, or already expired).</returns>
    /// <exception cref="ArgumentOutOfRangeException">A sliding expiration of zero or less.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a block; the key's entry is unchanged.</exception>
    public bool Set(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, NativeCacheEntryOptions entryOptions)
        => SetCore(key, value, default, value.Length, entryOptions);

    /// <summary>Stores <paramref name="value"/> under the UTF-8 bytes of <paramref name="key"/>, never expiring.</summary>
    /// <returns>False when refused (above <see cref="MaxEntryBytes"/>).</returns>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a block; the key's entry is unchanged.</exception>
    public bool Set(ReadOnlySpan<char> key, ReadOnlySpan<byte> value) => Set(key, value, default(NativeCacheEntryOptions));

    /// <summary>Stores <paramref name="value"/> under the UTF-8 bytes of <paramref name="key"/> for <paramref name="timeToLive"/>.</summary>
    /// <returns>False when refused (above <see cref="MaxEntryBytes"/>, or a time to live of zero or less).</returns>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a block; the key's entry is unchanged.</exception>
    public bool Set(ReadOnlySpan<char> key, ReadOnlySpan<byte> value, TimeSpan timeToLive)
        => Set(key, value, new NativeCacheEntryOptions { TimeToLive = timeToLive });

    /// <summary>Stores <paramref name="value"/> under the UTF-8 bytes of <paramref name="key"/>, expiring as <paramref name="entryOptions"/> say.</summary>
    /// <returns>False when refused (above <see cref="MaxEntryBytes"/>, or already expired).</returns>
    /// <exception cref="ArgumentOutOfRangeException">A sliding expiration of zero or less.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a block; the key's entry is unchanged.</exception>
    public bool Set(ReadOnlySpan<char> key, ReadOnlySpan<byte> value, NativeCacheEntryOptions entryOptions)
    {
        // As TryGet: an ASCII key narrowed and hashed in one pass, any other encoded in full (the same bytes and hash).
        Span<byte> utf8 = stackalloc byte[StackKeyBytes];
        if (CacheHashing.TryNarrowAsciiAndHash(key, utf8, out ulong hash)) return SetCore(utf8[..key.Length], hash, value, default, value.Length, entryOptions);
        using var encoded = new Utf8Key(key, utf8);
        return SetCore(encoded.Bytes, value, default, value.Length, entryOptions);
    }

    /// <summary>Stores the bytes of <paramref name="value"/> (one or more segments) under the UTF-8 bytes of <paramref name="key"/>.</summary>
    /// <returns>False when refused (above <see cref="MaxEntryBytes"/>, or already expired).</returns>
    /// <exception cref="ArgumentOutOfRangeException">A sliding expiration of zero or less.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a block; the key's entry is unchanged.</exception>
    public bool Set(ReadOnlySpan<char> key, in ReadOnlySequence<byte> value, NativeCacheEntryOptions entryOptions)
    {
        using var utf8 = new Utf8Key(key, key.Length <= StackKeyBytes / 3 ? stackalloc byte[StackKeyBytes] : default);
        if (value.IsSingleSegment) return SetCore(utf8.Bytes, value.FirstSpan, default, value.FirstSpan.Length, entryOptions);
        // A value's length is an int in the entry header: a longer sequence is refused as too large.
        return SetCore(utf8.Bytes, default, value, value.Length > int.MaxValue ? -1 : (int)value.Length, entryOptions);
    }

    private bool SetCore(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, in ReadOnlySequence<byte> sequence, int valueLength, NativeCacheEntryOptions entryOptions)
        => SetCore(key, CacheHashing.Hash(key), value, sequence, valueLength, entryOptions);

    /// <summary>The body of every <c>Set</c>: <paramref name="hash"/> is <see cref="CacheHashing.Hash"/> of <paramref name="key"/>.</summary>
    private bool SetCore(ReadOnlySpan<byte> key, ulong hash, ReadOnlySpan<byte> value, in ReadOnlySequence<byte> sequence, int valueLength, NativeCacheEntryOptions entryOptions)
    {
        // The bucket's and the sketch's misses overlap the clock, the lock and the entry's writing, which come before the
        // store looks the key up and counts it (a hint: harmless if Dispose frees the store meanwhile).
        var early = Volatile.Read(ref _store);
        early?.PrefetchForSet(hash);
        if (entryOptions.SlidingExpiration is { } s && s <= TimeSpan.Zero)
        {
            ThrowHelper.ThrowArgumentOutOfRange("entryOptions.SlidingExpiration", s, $"{_description}: a sliding expiration must be positive.");
        }
        bool expires = entryOptions.TimeToLive.HasValue || entryOptions.AbsoluteExpiration.HasValue || entryOptions.SlidingExpiration.HasValue;
        // The time: for the entry's expiry, and also without expiry for eviction, which removes the expired entries it
        // meets. A write without expiry to a cache with room evicts nothing, so it leaves the clock unread (the store reads
        // it if the write evicts after all: the budget's last block was taken meanwhile); a cache at its budget evicts on
        // nearly every write, and reads it here, outside the lock.
        long now = expires || (early?.AtBudget ?? true) ? _clock.GetUtcNow().UtcTicks : CacheStore.ClockNotRead;
        long absolute = CacheStore.Never;
        if (entryOptions.TimeToLive is { } ttl) absolute = ttl.Ticks >= CacheStore.Never - now ? CacheStore.Never : now + ttl.Ticks;
        if (entryOptions.AbsoluteExpiration is { } at) absolute = Math.Min(absolute, at.UtcTicks);
        long sliding = entryOptions.SlidingExpiration?.Ticks ?? 0;
        long expiry = sliding != 0 && sliding < absolute - now ? now + sliding : absolute;
        bool refused = valueLength < 0 || CacheStore.ChunksFor(key.Length, valueLength) > _maxEntryChunks || (expires && expiry <= now);
        // A refusal removes the key's old entry and counts it as an expiration if it had expired.
        if (refused && now == CacheStore.ClockNotRead) now = _clock.GetUtcNow().UtcTicks;
        lock (_writeLock)
        {
            var store = WriterStore;
            if (refused)
            {
                int removed = store.Remove(key, hash, now);
                if (removed == 2) Volatile.Write(ref _counters.Expirations, _counters.Expirations + 1);
                Volatile.Write(ref _counters.Refusals, _counters.Refusals + 1);
                return false;
            }
            store.Set(key, hash, value, sequence, valueLength, expiry, absolute, sliding, now, ref _counters, _clock);
            return true;
        }
    }

    // ---- TryGet / Refresh ----

    /// <summary>Copies the value of <paramref name="key"/> into <paramref name="destination"/> (and advances it); a hit
    /// resets a sliding expiration. No lock.</summary>
    /// <returns>True on a hit; false if the key is absent or expired (nothing written).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/>'s <c>GetSpan(sizeHint)</c> returned fewer bytes than the value's
    /// length it was asked for (nothing written).</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed (also when Dispose raced this read).</exception>
    public bool TryGet(ReadOnlySpan<byte> key, IBufferWriter<byte> destination) => TryGetCore(key, CacheHashing.Hash(key), destination);

    /// <summary>The body of both <c>TryGet</c>s: <paramref name="hash"/> is <see cref="CacheHashing.Hash"/> of <paramref name="key"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryGetCore(ReadOnlySpan<byte> key, ulong hash, IBufferWriter<byte> destination)
    {
        if (destination is null) ThrowHelper.ThrowArgumentNull(nameof(destination));
        // The bucket's miss overlaps the writer's GetSpan (a hint: harmless if Dispose frees the store meanwhile).
        Volatile.Read(ref _store)?.PrefetchBucket(hash);
        // The writer's span is asked for outside the gate: the writer is the caller's code (it may block or allocate).
        Span<byte> span = destination.GetSpan();
        int length = Read(key, hash, span, copy: true, out ReadTally tally);
        if (length < 0)
        {
            tally.Miss();
            return false;
        }
        if (length <= span.Length)
        {
            destination.Advance(length);
            tally.Hit();
            return true;
        }
        return TryGetLarger(key, hash, destination, length);
    }

    /// <summary>The read of a value longer than the writer's first span: ask for the length seen and read again (the value
    /// may have changed meanwhile), until it fits or misses.</summary>
    /// <remarks>Apart from the first read, not inlined: with the read inlined inside a retry loop, the JIT hoisted the
    /// gate's thread-static access out of the loop and kept it in the loop too, a dead call into the TLS resolver per read.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryGetLarger(ReadOnlySpan<byte> key, ulong hash, IBufferWriter<byte> destination, int length)
    {
        while (true)
        {
            Span<byte> span = destination.GetSpan(length);
            // A writer that breaks GetSpan's contract (fewer bytes than asked for) would have this loop ask forever. Checked
            // only here, on the retry, which already pays a second GetSpan and a second lookup: the hit whose value fits the
            // first span does not run it.
            if (span.Length < length) ThrowHelper.ThrowWriterSpanTooSmall(_description, span.Length, length, destination.GetType());
            length = Read(key, hash, span, copy: true, out ReadTally tally);
            if (length < 0)
            {
                tally.Miss();
                return false;
            }
            if (length <= span.Length)
            {
                destination.Advance(length);
                tally.Hit();
                return true;
            }
        }
    }

    /// <summary>Copies the value of the UTF-8 bytes of <paramref name="key"/> into <paramref name="destination"/>; as
    /// <see cref="TryGet(ReadOnlySpan{byte}, IBufferWriter{byte})"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/>'s <c>GetSpan(sizeHint)</c> returned fewer bytes than asked for.</exception>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public bool TryGet(ReadOnlySpan<char> key, IBufferWriter<byte> destination)
    {
        // An ASCII key (the usual one) is narrowed and hashed in one pass, with no encoder call and no rented buffer to
        // return (so no finally here); any other key is encoded in full, off this path. Both give the same bytes and hash.
        Span<byte> utf8 = stackalloc byte[StackKeyBytes];
        if (CacheHashing.TryNarrowAsciiAndHash(key, utf8, out ulong hash)) return TryGetCore(utf8[..key.Length], hash, destination);
        return TryGetEncoded(key, utf8, destination);
    }

    /// <summary>As <see cref="TryGet(ReadOnlySpan{char}, IBufferWriter{byte})"/> for a key that is not ASCII, shorter than
    /// 8 chars or longer than the stack buffer: encoded in <paramref name="stack"/> or a rented array.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryGetEncoded(ReadOnlySpan<char> key, Span<byte> stack, IBufferWriter<byte> destination)
    {
        using var utf8 = new Utf8Key(key, stack);
        return TryGet(utf8.Bytes, destination);
    }

    /// <summary>Resets the sliding expiration of <paramref name="key"/> without reading it. No lock.</summary>
    /// <returns>False if the key is absent or expired.</returns>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public bool Refresh(ReadOnlySpan<byte> key) => Read(key, CacheHashing.Hash(key), default, copy: false, out _) >= 0;

    /// <summary>Resets the sliding expiration of the UTF-8 bytes of <paramref name="key"/>.</summary>
    /// <returns>False if the key is absent or expired.</returns>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public bool Refresh(ReadOnlySpan<char> key)
    {
        using var utf8 = new Utf8Key(key, key.Length <= StackKeyBytes / 3 ? stackalloc byte[StackKeyBytes] : default);
        return Refresh(utf8.Bytes);
    }

    /// <summary>The value's length, -1 for a miss; with <paramref name="copy"/>, the value is copied into
    /// <paramref name="destination"/> when it fits (and the read counts as an access only then). <paramref name="tally"/>
    /// is the calling thread's, for the caller to count the read in.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Read(ReadOnlySpan<byte> key, ulong hash, Span<byte> destination, bool copy, out ReadTally tally)
    {
        var slot = ReaderGate.Enter();
        bool drain = false;
        CacheStore? store;
        int length;
        try
        {
            tally = _reads.For(slot);
            store = Volatile.Read(ref _store);
            if (store is null) ThrowDisposed();
            byte* entry = store.Find(key, hash, out _);
            if (entry == null) return -1;
            long expires = CacheStore.Expires(entry);
            if (expires != CacheStore.Never && expires <= _clock.GetUtcNow().UtcTicks) return -1;
            length = CacheStore.ValueLength(entry);
            if (!copy || length <= destination.Length)
            {
                if (copy) store.CopyValue(entry, destination);
                drain = store.Touch(entry, _clock, tally.Stripe);
            }
        }
        finally
        {
            ReaderGate.Exit(slot);
        }
        // Outside the gate (a drain takes the writer lock, and a writer may wait for readers): only if the lock is free.
        if (drain) TryDrain(store, tally.Stripe);
        return length;
    }

    /// <summary>Applies the reading thread's recorded reads (its stripe, <paramref name="stripe"/>) if the writer lock is free
    /// at once: a read never waits for a writer.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void TryDrain(CacheStore store, int stripe)
    {
        if (!Monitor.TryEnter(_writeLock)) return;
        try
        {
            // The store may have been replaced by Clear or freed by Dispose meanwhile: drain only the current one.
            if (ReferenceEquals(_store, store)) store.DrainOwn(stripe);
        }
        finally
        {
            Monitor.Exit(_writeLock);
        }
    }

    // ---- Remove, Clear, Dispose ----

    /// <summary>Removes <paramref name="key"/>.</summary>
    /// <returns>True if a live entry was removed (an expired one is removed too, and counted as an expiration, but false).</returns>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public bool Remove(ReadOnlySpan<byte> key)
    {
        ulong hash = CacheHashing.Hash(key);
        long now = _clock.GetUtcNow().UtcTicks;
        lock (_writeLock)
        {
            int removed = WriterStore.Remove(key, hash, now);
            if (removed == 2) Volatile.Write(ref _counters.Expirations, _counters.Expirations + 1);
            return removed == 1;
        }
    }

    /// <summary>Removes the UTF-8 bytes of <paramref name="key"/>; as <see cref="Remove(ReadOnlySpan{byte})"/>.</summary>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    public bool Remove(ReadOnlySpan<char> key)
    {
        using var utf8 = new Utf8Key(key, key.Length <= StackKeyBytes / 3 ? stackalloc byte[StackKeyBytes] : default);
        return Remove(utf8.Bytes);
    }

    /// <summary>Removes every entry and gives the blocks back to the system, once the reads in progress have ended.</summary>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the new index; the cache is unchanged.</exception>
    public void Clear()
    {
        // A new store for the old: if the system refuses its index, the old one stays.
        if (ReaderGate.Replace(ref _store, _writeLock, _ => new CacheStore(_layout)) is not { } old)
        {
            ThrowDisposed();
            return;
        }
        old.Free();
    }

    /// <summary>Frees the native memory once the reads in progress have ended. Afterwards every member throws
    /// <see cref="ObjectDisposedException"/>. Thread-safe and idempotent.</summary>
    public void Dispose()
    {
        if (ReaderGate.Replace(ref _store, _writeLock, static _ => null) is not { } old) return;
        old.Free();
        CacheMetrics.Caches.Unregister(this);
        GC.SuppressFinalize(this);
    }

    /// <summary><c>NativeCache 'sessions' (12 entries, 65,536 of 1,048,576 bytes)</c>, or <c>(disposed)</c>.</summary>
    public override string ToString()
        => Volatile.Read(ref _store) is { } store
            ? $"{_description} ({Plural.Of(store.Count, "entry", "entries")}, {store.NativeBytes} of {_maxBytes} bytes)"
            : $"{_description} (disposed)";

    private CacheStore WriterStore
    {
        get
        {
            var store = _store;
            if (store is null) ThrowDisposed();
            return store;
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed() => ThrowHelper.ThrowDisposed(_description);

}

/// <summary>The counters the writers keep (under the cache's lock; read with Volatile.Read).</summary>
internal struct CacheCounters
{
    public long Evictions;
    public long Expirations;
    public long Refusals;
}
