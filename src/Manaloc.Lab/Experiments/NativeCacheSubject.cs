using System.Buffers;
using System.Collections.Concurrent;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using BitFaster.Caching;
using BitFaster.Caching.Lfu;
using BitFaster.Caching.Lru;
using FASTER.core;
using Manaloc.Collections;
using Cache = Manaloc.Collections.NativeCache;
using Microsoft.Extensions.Caching.Memory;
using CacheSession = FASTER.core.ClientSession<FASTER.core.SpanByte, FASTER.core.SpanByte, FASTER.core.SpanByte, System.Buffers.ArrayBufferWriter<byte>,
    FASTER.core.Empty, Manaloc.Lab.Experiments.FasterCacheSubject.CopyHitToWriter>;

namespace Manaloc.Lab.Experiments;

/// <summary>One cache's operations, as a struct so each variant's loops are compiled for it with direct calls.</summary>
internal interface ICacheOperations
{
    /// <summary>The forms of a request's key <see cref="TryGet"/> and <see cref="Replace"/> read (the only ones the driver builds).</summary>
    static abstract KeyForms Reads { get; }

    /// <summary>False when <see cref="Add"/> ignores its key, so a fill formats none.</summary>
    static virtual bool AddReadsKey => true;

    /// <summary>Stores entry <paramref name="index"/> from a key the driver formatted and keeps no longer: the cache makes whatever it keeps.</summary>
    void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value);

    /// <summary>Looks the key at <paramref name="position"/> of <paramref name="requests"/> up (in the form the cache takes) and, on a hit, copies its value into <paramref name="destination"/>.</summary>
    bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination);

    /// <summary>Replaces the value of the key at <paramref name="position"/> of <paramref name="requests"/> (present) with <paramref name="value"/>.</summary>
    void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value);
}

/// <summary>
/// One variant of the native-cache experiment: filled one entry at a time from keys the driver formats and drops, then
/// read and rewritten by up to <see cref="MaxThreads"/> threads from keys materialized in access order
/// (<see cref="RequestKeys"/>), each thread with its own operations (FASTER needs a session per thread) and its own
/// reused writer that every hit is copied into.
/// </summary>
internal abstract class CacheSubject : IDisposable
{
    /// <summary>Threads a subject serves at once.</summary>
    public const int MaxThreads = 2;

    /// <summary>Its variant name.</summary>
    public abstract string Variant { get; }

    /// <summary>Entries the cache holds now (FASTER keeps no count: -1).</summary>
    public abstract long Count { get; }

    /// <summary>The forms of a request's key its loops read: what <see cref="RequestKeys.Materialize"/> must build for it.</summary>
    public abstract KeyForms Reads { get; }

    /// <summary>Stores the entries of indexes [<paramref name="from"/>, <paramref name="to"/>) in order, keeping none of their keys,
    /// through <paramref name="thread"/>'s operations (below <see cref="MaxThreads"/>; two threads fill side by side through their own).</summary>
    public abstract void Fill(long from, long to, int thread = 0);

    /// <summary>
    /// Looks up <paramref name="count"/> keys of <paramref name="requests"/> on behalf of <paramref name="thread"/>, from
    /// where its previous call stopped (thread <c>t</c> starts <c>t</c> ÷ <see cref="MaxThreads"/> of the way round, so
    /// the threads do not read the same keys at once), copying every hit into the thread's writer; returns the hits.
    /// </summary>
    public abstract long Gets(int thread, RequestKeys requests, long count);

    /// <summary>As <see cref="Gets"/>, every twentieth operation a write instead that replaces the key's value with one of a new random size (95% reads, 5% writes); returns the hits.</summary>
    public abstract long Mix(int thread, RequestKeys requests, long count);

    /// <summary>As <see cref="Gets"/>, every operation a write of a new random size; returns the writes.</summary>
    public abstract long Sets(int thread, RequestKeys requests, long count);

    /// <summary>Frees the cache.</summary>
    public abstract void Dispose();
}

/// <summary>A <see cref="CacheSubject"/> over one operations struct per thread.</summary>
internal sealed class CacheSubject<TOperations>(string variant, TOperations[] perThread, Func<long> count, Action dispose) : CacheSubject
    where TOperations : struct, ICacheOperations
{
    // One cursor per thread, a cache line apart: each call goes on where the last one stopped, so a short calibration
    // call does not read the same few (then cached) keys again and again.
    private readonly long[] _cursors = new long[MaxThreads * 8];
    private readonly ArrayBufferWriter<byte>[] _writers = [.. Enumerable.Range(0, MaxThreads).Select(_ => new ArrayBufferWriter<byte>(NativeCacheWorkload.MaxValueBytes))];

    public override string Variant => variant;
    public override long Count => count();
    public override KeyForms Reads => TOperations.Reads;

    public override void Fill(long from, long to, int thread = 0)
    {
        ref var cache = ref perThread[thread];
        Span<char> key = stackalloc char[NativeCacheWorkload.MaxKeyChars];
        for (long i = from; i < to; i++)
        {
            int length = TOperations.AddReadsKey ? NativeCacheWorkload.FormatKey(i, key) : 0;
            cache.Add(key[..length], (int)i, NativeCacheWorkload.Value(i));
        }
    }

    public override long Gets(int thread, RequestKeys requests, long count) => Run<ReadsOnly>(thread, requests, count);

    public override long Mix(int thread, RequestKeys requests, long count) => Run<OneWriteInTwenty>(thread, requests, count);

    public override long Sets(int thread, RequestKeys requests, long count)
    {
        Run<WritesOnly>(thread, requests, count);
        return count;
    }

    /// <summary>The loop of <see cref="Gets"/>, <see cref="Mix"/> and <see cref="Sets"/>: operation <c>at</c> of the
    /// thread's stream is a write (a new value of a new random size) where <typeparamref name="TWrites"/> says so, else a
    /// read into the thread's writer; returns the hits. A struct type argument, so each loop is compiled with its test folded.</summary>
    private long Run<TWrites>(int thread, RequestKeys requests, long count) where TWrites : struct, IWriteSchedule
    {
        requests.Require(TOperations.Reads);
        ref var cache = ref perThread[thread];
        var writer = _writers[thread];
        long cursor = _cursors[thread * 8], hits = 0;
        int length = requests.Length;
        // The position goes round the stream by a compare, not a division: the loop's own cost stays a few cycles.
        int position = (int)((cursor + (long)thread * length / MaxThreads) % length);
        for (long i = 0; i < count; i++, position = position + 1 == length ? 0 : position + 1)
        {
            long at = cursor + i;
            if (TWrites.IsWrite(at))
            {
                cache.Replace(requests, position, NativeCacheWorkload.Value(at, NativeCacheWorkload.RewriteLength(at)));
                continue;
            }
            writer.ResetWrittenCount();
            if (cache.TryGet(requests, position, writer)) hits++;
        }
        _cursors[thread * 8] = cursor + count;
        return hits;
    }

    public override void Dispose() => dispose();
}

/// <summary>Which operations of a <see cref="CacheSubject"/>'s stream are writes.</summary>
internal interface IWriteSchedule
{
    static abstract bool IsWrite(long at);
}

internal readonly struct ReadsOnly : IWriteSchedule
{
    public static bool IsWrite(long at) => false;
}

/// <summary>Every twentieth operation: 95% reads, 5% writes.</summary>
internal readonly struct OneWriteInTwenty : IWriteSchedule
{
    public static bool IsWrite(long at) => at % 20 == 0;
}

internal readonly struct WritesOnly : IWriteSchedule
{
    public static bool IsWrite(long at) => true;
}

/// <summary>The variants' names and how each is built for a byte budget.</summary>
internal static class CacheSubjects
{
    public const string Memory = "MemoryCache";
    public const string Lru = "ConcurrentLru";
    public const string Lfu = "ConcurrentLfu";
    public const string Faster = "FasterKV (SpanByte, in memory)";
    public const string Dictionary = "ConcurrentDictionary<string, byte[]>";
    public const string Native = "NativeCache";
    public const string Floor = "key and copy from memory (floor)";
    public const string KeyFloor = "key only (floor)";
    public const string IndexFloor = "key, index and copy (floor)";

    /// <summary>The caches, each measured in a child process of its own, in display order.</summary>
    public static readonly IReadOnlyList<string> Caches = [Memory, Lru, Lfu, Faster, Dictionary, Native];

    /// <summary>The caches a target reads (NativeCache and the anchors of its pause and mix targets): quick mode's children.</summary>
    public static readonly IReadOnlyList<string> Judged = [Memory, Lru, Faster, Native];

    /// <summary>Every variant: the caches and the floors (measured in NativeCache's child).</summary>
    public static readonly IReadOnlyList<string> All = [.. Caches, Floor, IndexFloor, KeyFloor];

    /// <summary>Entries a count-bounded cache (ConcurrentLru, ConcurrentLfu) gets for <paramref name="budgetBytes"/>: the budget over the mean key and value bytes.</summary>
    public static int CapacityFor(long budgetBytes) => (int)Math.Clamp(budgetBytes / NativeCacheWorkload.MeanEntryBytes, 8, Array.MaxLength);

    /// <summary>
    /// A new, empty cache of <paramref name="variant"/> for a byte budget: MemoryCache's <c>SizeLimit</c> in bytes (each
    /// entry sized at its key and value bytes), ConcurrentLru and ConcurrentLfu at <paramref name="capacity"/> entries,
    /// FASTER's in-memory log at the power of two nearest the budget, NativeCache's <c>MaxBytes</c>; ConcurrentDictionary
    /// has no bound. The copy floor keeps each entry's value in a slot of its own of a flat native store
    /// (<see cref="FloorStore"/>); the indexed floor finds that slot through a table of slot references as large as
    /// NativeCache's index at the budget (<see cref="FloorIndex"/>); the key floor keeps nothing and only encodes and
    /// hashes each key.
    /// </summary>
    /// <exception cref="ArgumentException">An unknown variant.</exception>
    public static CacheSubject Create(string variant, long budgetBytes, int capacity, int entries) => variant switch
    {
        Memory => CreateMemory(budgetBytes),
        Lru => CreateLru(capacity),
        Lfu => CreateLfu(capacity),
        Faster => FasterCacheSubject.Create(budgetBytes, entries),
        Dictionary => CreateDictionary(),
        Native => CreateNative(budgetBytes),
        Floor => CreateFloor(entries),
        IndexFloor => CreateIndexFloor(budgetBytes, new FloorStore(entries), ownsStore: true),
        KeyFloor => CreateKeyFloor(),
        _ => throw new ArgumentException($"Unknown native-cache variant '{variant}'; known: {string.Join(", ", All)}.", nameof(variant)),
    };

    /// <summary>NativeCache's options for a budget: the largest entry the workload makes is far below the limit set here.</summary>
    public static NativeCacheOptions NativeOptions(long budgetBytes) => new()
    {
        MaxBytes = budgetBytes,
        MaxEntryBytes = Math.Min(budgetBytes, 16 * 1024),
        Name = "lab.native-cache",
    };

    private static CacheSubject CreateMemory(long budgetBytes)
    {
        var cache = new MemoryCache(new MemoryCacheOptions { SizeLimit = budgetBytes });
        return new CacheSubject<MemoryOperations>(Memory, [new(cache), new(cache)], () => cache.Count, cache.Dispose);
    }

    /// <summary>The disposal of a cache that holds only managed objects: none. The collector takes it once it is unreachable;
    /// a <c>Clear</c> would remove its million entries one by one at the end of the child, a second spent on nothing.</summary>
    private static void NothingToFree()
    {
    }

    private static CacheSubject CreateLru(int capacity)
    {
        var cache = new ConcurrentLru<string, byte[]>(capacity);
        // Its entries by its queues' counts: each entry is in exactly one of the three queues (nothing here removes one but
        // eviction, which dequeues it as it goes). Its Count enumerates every entry of its dictionary instead, a tenth of a
        // second or more of the child at a million entries.
        return new CacheSubject<BitFasterOperations>(Lru, [new(cache), new(cache)], () => cache.HotCount + cache.WarmCount + cache.ColdCount, NothingToFree);
    }

    private static CacheSubject CreateLfu(int capacity)
    {
        var cache = new ConcurrentLfu<string, byte[]>(capacity);
        return new CacheSubject<BitFasterOperations>(Lfu, [new(cache), new(cache)], () => cache.Count, NothingToFree);
    }

    private static CacheSubject CreateDictionary()
    {
        var cache = new ConcurrentDictionary<string, byte[]>();
        return new CacheSubject<DictionaryOperations>(Dictionary, [new(cache), new(cache)], () => cache.Count, NothingToFree);
    }

    private static CacheSubject CreateNative(long budgetBytes)
    {
        var cache = new Cache(NativeOptions(budgetBytes));
        return new CacheSubject<NativeOperations>(Native, [new(cache), new(cache)], () => cache.Count, cache.Dispose);
    }

    private static CacheSubject CreateFloor(int entries) => CreateFloor(new FloorStore(entries), ownsStore: true);

    /// <summary>The copy floor over <paramref name="store"/>, which it frees with itself only if it <paramref name="ownsStore"/>.</summary>
    public static CacheSubject CreateFloor(FloorStore store, bool ownsStore)
    {
        var sinks = new ulong[CacheSubject.MaxThreads * 8]; // a cache line apart, as the key floor's
        return new CacheSubject<FloorOperations>(Floor, [new(store, sinks, 0), new(store, sinks, 8)], () => store.Entries, () =>
        {
            GC.KeepAlive(sinks);
            if (ownsStore) store.Dispose();
        });
    }

    /// <summary>
    /// The indexed floor over <paramref name="store"/> (freed with it only if it <paramref name="ownsStore"/>) and a table
    /// of as many buckets as NativeCache's index has at <paramref name="budgetBytes"/>, which it owns. Its fill writes
    /// both: NativeCache's child fills it alone, and the copy floor reads the same store.
    /// </summary>
    public static CacheSubject CreateIndexFloor(long budgetBytes, FloorStore store, bool ownsStore)
    {
        FloorIndex index;
        try
        {
            index = new FloorIndex(FloorIndex.BucketsFor(budgetBytes));
        }
        catch
        {
            if (ownsStore) store.Dispose();
            throw;
        }
        var operations = new IndexFloorOperations(store, index);
        return new CacheSubject<IndexFloorOperations>(IndexFloor, [operations, operations], () => store.Entries, () =>
        {
            index.Dispose();
            if (ownsStore) store.Dispose();
        });
    }

    private static CacheSubject CreateKeyFloor()
    {
        var sinks = new ulong[CacheSubject.MaxThreads * 8]; // a cache line apart: each thread folds its hashes into its own
        return new CacheSubject<KeyFloorOperations>(KeyFloor, [new(sinks, 0), new(sinks, 8)], () => 0, () => GC.KeepAlive(sinks));
    }

    /// <summary>A string key's bytes in the byte budgets: its UTF-8 length (the keys are ASCII), as NativeCache stores it.</summary>
    private static long KeyBytes(string key) => key.Length;

    private readonly struct MemoryOperations(MemoryCache cache) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Strings;

        public void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value) => Store(new string(key), value);

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination)
        {
            if (!cache.TryGetValue(requests.Key(position), out object? value)) return false;
            destination.Write((byte[])value!);
            return true;
        }

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value) => Store(requests.Key(position), value);

        // CreateEntry and Dispose: MemoryCache's own path under Set, without the options object Set takes.
        private void Store(string key, ReadOnlySpan<byte> value)
        {
            using var entry = cache.CreateEntry(key);
            entry.Size = KeyBytes(key) + value.Length;
            entry.Value = value.ToArray();
        }
    }

    /// <summary>ConcurrentLru and ConcurrentLfu through BitFaster's one cache interface.</summary>
    private readonly struct BitFasterOperations(ICache<string, byte[]> cache) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Strings;

        public void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value) => cache.AddOrUpdate(new string(key), value.ToArray());

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination)
        {
            if (!cache.TryGet(requests.Key(position), out var value)) return false;
            destination.Write(value);
            return true;
        }

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value) => cache.AddOrUpdate(requests.Key(position), value.ToArray());
    }

    private readonly struct DictionaryOperations(ConcurrentDictionary<string, byte[]> cache) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Strings;

        public void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value) => cache[new string(key)] = value.ToArray();

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination)
        {
            if (!cache.TryGetValue(requests.Key(position), out var value)) return false;
            destination.Write(value);
            return true;
        }

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value) => cache[requests.Key(position)] = value.ToArray();
    }

    private readonly struct NativeOperations(Cache cache) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Strings;

        public void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value) => cache.Set(key, value);

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination) => cache.TryGet(requests.Key(position).AsSpan(), destination);

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value) => cache.Set(requests.Key(position).AsSpan(), value);
    }

    /// <summary>
    /// What no cache can beat, as every cache pays it: the request's key encoded to UTF-8 and hashed as NativeCache's
    /// char-key members do (the key floor's work), then the hit's value copied into the writer from the entry's own
    /// slot of a store as large as the cache's values (<see cref="FloorStore"/>), found by the entry's index with no
    /// lookup: the one random access to memory a hit needs. A write hashes its key and copies the new value into the slot.
    /// </summary>
    private readonly struct FloorOperations(FloorStore store, ulong[] sinks, int slot) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Strings;

        /// <summary>The store finds a value by its index: the fill formats no key.</summary>
        public static bool AddReadsKey => false;

        public void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value) => store.Write(index, value);

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination)
        {
            sinks[slot] += KeyFloorOperations.Hash(requests.Key(position));
            destination.Write(store.Read(requests.Index(position)));
            return true;
        }

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value)
        {
            sinks[slot] += KeyFloorOperations.Hash(requests.Key(position));
            store.Write(requests.Index(position), value);
        }
    }

    /// <summary>
    /// The floor of a cache that finds a value by its key through a hash index: the copy floor's work with the one
    /// load from the index between the key's hash and the copy. The request's key encoded and hashed as NativeCache's
    /// char-key members do, then its bucket's slot reference loaded from <see cref="FloorIndex"/> (as many buckets as
    /// NativeCache's index at the budget, picked as NativeCache picks them), then the value copied from the slot it names
    /// (<see cref="FloorStore"/>): two dependent random accesses to memory and nothing else. No key is stored or compared
    /// (a colliding key's bucket names another entry's slot, whose value is copied instead). A write hashes its key, loads
    /// the bucket and copies the new value into the slot it names. The fill links each entry's bucket to its slot and
    /// writes the slot.
    /// </summary>
    private readonly struct IndexFloorOperations(FloorStore store, FloorIndex index) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Strings;

        public void Add(ReadOnlySpan<char> key, int slot, ReadOnlySpan<byte> value)
        {
            store.Write(slot, value);
            index.Link(KeyFloorOperations.Hash(key), slot);
        }

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination)
        {
            int slot = index.Find(KeyFloorOperations.Hash(requests.Key(position)));
            if (slot < 0) return false;
            destination.Write(store.Read(slot));
            return true;
        }

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value)
        {
            int slot = index.Find(KeyFloorOperations.Hash(requests.Key(position)));
            if (slot >= 0) store.Write(slot, value);
        }
    }

    /// <summary>
    /// What the key alone costs NativeCache: the request's key encoded to UTF-8 on the stack and hashed, as its
    /// char-key members do, and nothing stored or copied; the hash is folded into the thread's sink so it is not
    /// dropped. The part of the mix that is the key's, which every string-keyed call pays.
    /// </summary>
    private readonly struct KeyFloorOperations(ulong[] sinks, int slot) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Strings;

        public static bool AddReadsKey => false;

        public void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value)
        {
        }

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination)
        {
            sinks[slot] += Hash(requests.Key(position));
            return true;
        }

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value) => sinks[slot] += Hash(requests.Key(position));

        /// <summary>The key encoded to UTF-8 on the stack and hashed, as NativeCache's char-key members do: an ASCII key of
        /// 8 to 256 chars narrowed and hashed in one pass, any other encoded in full, then hashed.</summary>
        [SkipLocalsInit]
        public static ulong Hash(ReadOnlySpan<char> key)
        {
            Span<byte> utf8 = stackalloc byte[256];
            if (CacheHashing.TryNarrowAsciiAndHash(key, utf8, out ulong hash)) return hash;
            using var encoded = new Utf8Key(key, utf8);
            return CacheHashing.Hash(encoded.Bytes);
        }
    }
}

/// <summary>
/// A zeroed block of native memory for a floor, on transparent huge pages where the system has them, as NativeCache's
/// large blocks and index are: on base pages a random read of hundreds of megabytes also pays a page walk that the
/// cache's reads do not, and the floor would sit above what a cache must pay. A block this large comes zeroed from the
/// system, so nothing here touches its pages; whoever fills it does.
/// </summary>
internal sealed unsafe class FloorBlock : IDisposable
{
    private byte* _start;
    private readonly bool _mapped;

    /// <param name="bytes">The block's size.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bytes"/> is not positive.</exception>
    public FloorBlock(long bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bytes);
        Bytes = (nuint)bytes;
        _start = Platform.LabNative.MapHugePages(Bytes);
        _mapped = _start is not null;
        if (!_mapped) _start = (byte*)NativeMemory.AllocZeroed(Bytes);
    }

    /// <summary>The block's size in bytes.</summary>
    public nuint Bytes { get; }

    /// <summary>The block's first byte.</summary>
    /// <exception cref="ObjectDisposedException">The block was freed.</exception>
    public byte* Start
    {
        get
        {
            ObjectDisposedException.ThrowIf(_start is null, this);
            return _start;
        }
    }

    /// <summary>Frees the block (twice is harmless).</summary>
    public void Dispose()
    {
        if (_start is null) return;
        if (_mapped) Platform.LabNative.UnmapHugePages(_start, Bytes);
        else NativeMemory.Free(_start);
        _start = null;
    }
}

/// <summary>
/// The copy floor's values: one flat block of native memory with a slot per entry, the value's length (an int) and
/// then room for the longest value (<see cref="NativeCacheWorkload.MaxValueBytes"/>), so a value of any size fits its
/// slot and a read touches the slot alone: the entry's value fetched from its own place in memory, as a cache's hit
/// must, with no index to search. 520 MB for a million entries, beside the cache's own data of about the same size, so
/// its slots are as far from the processor's caches as a cache's entries are. Zeroed (<see cref="FloorBlock"/>), so
/// every slot starts empty: a slot read before its first write is a value of no bytes, never stray memory.
/// </summary>
internal sealed unsafe class FloorStore : IDisposable
{
    /// <summary>A slot's bytes: the length, then the longest value, rounded up to 8 bytes.</summary>
    private const int Stride = (sizeof(int) + NativeCacheWorkload.MaxValueBytes + 7) & ~7;

    private readonly FloorBlock _slots;

    /// <param name="entries">Slots, one an entry index.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="entries"/> is not positive.</exception>
    public FloorStore(int entries)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entries);
        Entries = entries;
        _slots = new FloorBlock((long)entries * Stride);
    }

    /// <summary>Slots in the store.</summary>
    public int Entries { get; }

    /// <summary>Stores <paramref name="value"/> (at most <see cref="NativeCacheWorkload.MaxValueBytes"/>) in slot <paramref name="index"/>.</summary>
    public void Write(int index, ReadOnlySpan<byte> value)
    {
        byte* slot = Slot(index);
        if ((uint)value.Length > NativeCacheWorkload.MaxValueBytes)
        {
            throw new ArgumentOutOfRangeException(nameof(value), value.Length, $"A floor slot holds at most {NativeCacheWorkload.MaxValueBytes} bytes.");
        }
        *(int*)slot = value.Length;
        value.CopyTo(new Span<byte>(slot + sizeof(int), value.Length));
    }

    /// <summary>The value last written to slot <paramref name="index"/>.</summary>
    public ReadOnlySpan<byte> Read(int index)
    {
        byte* slot = Slot(index);
        return new ReadOnlySpan<byte>(slot + sizeof(int), *(int*)slot);
    }

    private byte* Slot(int index)
    {
        byte* slots = _slots.Start;
        if ((uint)index >= (uint)Entries) throw new ArgumentOutOfRangeException(nameof(index), index, $"The floor store has {Entries} slots.");
        return slots + (nint)index * Stride;
    }

    /// <summary>Frees the slots.</summary>
    public void Dispose() => _slots.Dispose();
}

/// <summary>
/// The indexed floor's index: a table of 4-byte slot references (a slot of a <see cref="FloorStore"/> + 1; 0 is an
/// empty bucket), as many buckets as NativeCache's index has at the same budget (<see cref="CacheLayout.Buckets"/>),
/// picked by the key's hash as NativeCache picks them (its low 32 bits and the mask). A lookup is one load from the
/// table: the second dependent access to memory (before the value's) that any cache finding a value by its key through
/// a hash index pays. It stores no key and compares none: keys whose hashes share a bucket leave it naming the last one
/// linked, so a lookup of the others copies that entry's value (a value of the same sizes, so the same work).
/// </summary>
internal sealed unsafe class FloorIndex : IDisposable
{
    private readonly FloorBlock _buckets;
    private readonly uint _mask;

    /// <param name="buckets">Buckets: a power of two, at least 1 and at most 2^32.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="buckets"/> is not a power of two in that range.</exception>
    public FloorIndex(long buckets)
    {
        if (buckets <= 0 || buckets > 1L << 32 || (buckets & (buckets - 1)) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(buckets), buckets, "A floor index's buckets must be a power of two from 1 to 2^32 (picked by a mask, as NativeCache's are).");
        }
        Buckets = buckets;
        _mask = (uint)(buckets - 1);
        _buckets = new FloorBlock(buckets * sizeof(uint));
    }

    /// <summary>The buckets of NativeCache's index at a budget of <paramref name="budgetBytes"/>.</summary>
    public static long BucketsFor(long budgetBytes) => new CacheLayout(budgetBytes).Buckets;

    /// <summary>Buckets in the table.</summary>
    public long Buckets { get; }

    /// <summary>Makes <paramref name="hash"/>'s bucket name slot <paramref name="slot"/> (replacing whatever it named).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="slot"/> is negative.</exception>
    public void Link(ulong hash, int slot)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(slot);
        *Bucket(hash) = (uint)slot + 1;
    }

    /// <summary>The slot <paramref name="hash"/>'s bucket names, or -1 when it names none.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int Find(ulong hash) => (int)*Bucket(hash) - 1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private uint* Bucket(ulong hash) => (uint*)_buckets.Start + ((uint)hash & _mask);

    /// <summary>Frees the table.</summary>
    public void Dispose() => _buckets.Dispose();
}

/// <summary>
/// FASTER's <see cref="FasterKV{Key, Value}"/> over <see cref="SpanByte"/> keys and values, kept in memory: a null log
/// device, the in-memory log at the power of two nearest the budget in 4 MiB pages, and a hash index of one 64-byte
/// bucket (seven entries) per four keys, fixed at construction as FASTER's index is. The fill encodes each key to UTF-8
/// on the stack; the throughput loops hand it the request's UTF-8 bytes (<see cref="RequestKeys.Utf8"/>); a hit is copied straight from the log into the thread's writer. A record
/// that the log has moved past its memory (to the null device) reads as a miss. One session per thread.
/// </summary>
internal static class FasterCacheSubject
{
    private const int PageSizeBits = 22;

    /// <summary>The in-memory log's size for a budget: the power of two nearest it (the larger one midway), and at least two pages.</summary>
    public static long LogBytes(long budgetBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(budgetBytes);
        long above = (long)BitOperations.RoundUpToPowerOf2((ulong)budgetBytes), below = above == budgetBytes ? above : above / 2;
        long nearest = above - budgetBytes <= budgetBytes - below ? above : below;
        return Math.Max(2L << PageSizeBits, nearest);
    }

    public static CacheSubject Create(long budgetBytes, int entries)
    {
        long buckets = Math.Max(64, (long)BitOperations.RoundUpToPowerOf2((ulong)Math.Max(1, entries / 4)));
        var device = new NullDevice();
        var store = new FasterKV<SpanByte, SpanByte>(buckets, new LogSettings
        {
            LogDevice = device,
            PageSizeBits = PageSizeBits,
            MemorySizeBits = BitOperations.Log2((ulong)LogBytes(budgetBytes)),
        });
        var sessions = new CacheSession[CacheSubject.MaxThreads];
        for (int t = 0; t < sessions.Length; t++) sessions[t] = store.For(new CopyHitToWriter()).NewSession<CopyHitToWriter>();
        var operations = sessions.Select(s => new FasterOperations(s)).ToArray();
        return new CacheSubject<FasterOperations>(CacheSubjects.Faster, operations, () => -1, () =>
        {
            foreach (var s in sessions) s.Dispose();
            store.Dispose();
            device.Dispose();
        });
    }

    /// <summary>FASTER's callbacks for SpanByte values whose reads copy the value into the caller's writer.</summary>
    internal sealed class CopyHitToWriter : SpanByteFunctions<SpanByte, ArrayBufferWriter<byte>, Empty>
    {
        public override bool SingleReader(ref SpanByte key, ref SpanByte input, ref SpanByte value, ref ArrayBufferWriter<byte> dst, ref ReadInfo readInfo)
        {
            dst.Write(value.AsReadOnlySpan());
            return true;
        }

        public override bool ConcurrentReader(ref SpanByte key, ref SpanByte input, ref SpanByte value, ref ArrayBufferWriter<byte> dst, ref ReadInfo readInfo)
        {
            dst.Write(value.AsReadOnlySpan());
            return true;
        }
    }

    private readonly struct FasterOperations(CacheSession session) : ICacheOperations
    {
        public static KeyForms Reads => KeyForms.Utf8;

        public void Add(ReadOnlySpan<char> key, int index, ReadOnlySpan<byte> value)
        {
            Span<byte> bytes = stackalloc byte[NativeCacheWorkload.MaxKeyChars * 3];
            session.Upsert(bytes[..Encoding.UTF8.GetBytes(key, bytes)], value);
        }

        public bool TryGet(RequestKeys requests, int position, ArrayBufferWriter<byte> destination)
        {
            SpanByte input = default;
            var status = session.Read(requests.Utf8(position), ref input, ref destination);
            if (status.IsPending)
            {
                // The record was moved past the log's memory, to the null device: no value to read, a miss.
                session.CompletePending(wait: true);
                return false;
            }
            return status.Found;
        }

        public void Replace(RequestKeys requests, int position, ReadOnlySpan<byte> value) => session.Upsert(requests.Utf8(position), value);
    }
}
