using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using Manaloc.Platform;

namespace Manaloc.Collections;

/// <summary>
/// The table both maps are made of: linear hashing over buckets sized for 14 entries, the buckets in native
/// segments reached through a native directory, overflow buckets from a native arena. Single writer (the map,
/// or the concurrent map's writer lock); in concurrent mode lock-free readers validate against per-bucket
/// sequence numbers.
/// </summary>
/// <remarks>
/// <para>Bucket layout: a 32-byte header (never straddling a cache line): bytes 0-13 one tag per slot (0 = empty,
/// else 0x80 | the hash's top seven bits), byte 14 the number of occupied slots, byte 15 zero; bytes 16-19 the
/// bucket's sequence number (odd while a writer changes its chain); bytes 20-23 where its entries start, relative to
/// the header; bytes 24-31 the next overflow bucket. The entries are key then value, unpadded. A primary bucket's
/// header sits in its segment's header block and its entries in the segment's entry block (so the headers of the
/// whole table, 32 bytes per 14 slots, stay in cache, and a lookup usually misses once, on the entry); an overflow
/// bucket's entries follow its header. A lookup compares the 16 tag bytes with the
/// wanted tag in one <see cref="Vector128"/> compare and reads a key only where the tag matched (1/128 false
/// matches per occupied slot). A primary bucket holds 14 slots, an overflow bucket 6 (bytes 6-13 of its tags are
/// never written, so they never match). Removal leaves a hole (tag 0) that the next insert into that chain fills:
/// no entry ever moves except in a split, so an enumerator survives removals as <c>Dictionary</c>'s does.</para>
/// <para>Growth (linear hashing): the table has 2^d + p buckets; a hash's bucket is its low d bits, or its low
/// d+1 bits when those d bits are below p. When the count passes 85% of the primary slots, bucket p is split:
/// its entries are divided between p and p + 2^d (by hash bit d) and p advances (at 2^d, d grows and p restarts).
/// So the table grows by one bucket at a time, never copies itself, and an insert does at most one split: the
/// worst single insert moves one chain's entries (and, once per segment of 64 KiB, allocates that segment).
/// Memory grows with the count, not by doubling, so the peak while growing is the final size.</para>
/// <para>Memory: primary buckets in segments of about 64 KiB, headers first (the first segment of a small table starts at the
/// size it needs and doubles, copied, up to the full segment); the directory of segment pointers (each less the
/// headers of the buckets before its segment: <see cref="DirectoryEntry"/>) doubles when it is full (it is 8 bytes per
/// 64 KiB); overflow buckets are carved from 64 KiB arena chunks and recycled through
/// a free list. Full segments below <see cref="FirstHugeSegment"/> and arena chunks are lazily faulted mappings
/// (<see cref="PageBlocks"/>: an insert that starts one takes a page fault or two, not all its pages'); full segments
/// from <see cref="FirstHugeSegment"/> on are carved from 2 MiB blocks on transparent huge pages
/// (<see cref="HugePageBlocks"/>; see <see cref="AllocateFullSegment"/>). Nothing is returned to the system before Clear
/// and Dispose: a concurrent reader may hold any pointer the table ever published, so replaced directories and first
/// segments wait in <see cref="_retired"/> (at most about 2 x log2 of the table's size of them, a few KiB in all). A plain
/// table is then freed (<see cref="Free"/>); a concurrent one, which a lock-free reader may still be inside, is released
/// (<see cref="ReleaseUnderReaders"/>: its pages given back, its addresses kept readable until its finalizer), or, where
/// pages cannot be discarded, freed once the reader gate has seen every read end. So every block a reader can reach
/// in concurrent mode is a page mapping (first segments included) or a directory, which a release keeps whole.</para>
/// <para>Concurrency (concurrent mode; one writer at a time): a writer makes the chain's primary sequence odd
/// (release store, then a store-store fence so the odd value is visible before any data store),
/// changes the chain, and makes it even again (release store: every data store before it). A reader reads the
/// split state (acquire), the directory (acquire), the primary's sequence (acquire, kept as the even number at or
/// below it, so an odd one fails the re-read's comparison: a read retries while a writer is in), the chain, then a
/// load-load fence (the chain's loads before the re-read), the sequence again and, after a miss, the split state
/// again: the same even sequence proves that no writer changed the chain while it read, so the value it copied is
/// whole and the key was in that chain then; a miss also needs the same split state (so the same bucket for its
/// hash), so the key cannot have moved to a split's other half before the reader came. A split publishes the new split state (release)
/// before the chain's sequence becomes even again, so a reader that saw the even sequence after a split also
/// sees the split state that sends it to the other bucket. A reader that follows an overflow pointer re-checks
/// the sequence at each hop, so a chain relinked under it (a bucket recycled) can never make it loop. A first
/// segment replaced by a larger copy has every sequence of its old block made odd after the directory points to
/// the copy, so a reader on the old block retries and then reads the new directory. A header's entry offset is
/// written before its segment (or overflow bucket) can be reached and never changes after, so a reader that
/// reached the header reads the offset it was published with.</para>
/// </remarks>
internal sealed unsafe class NativeHashTable<TKey, TValue> : IThreadPoolWorkItem
    where TKey : unmanaged, IEquatable<TKey>
    where TValue : unmanaged
{
    internal const int HeaderBytes = 32;
    internal const int PrimarySlots = 14;
    internal const int OverflowSlots = 6;
    private const uint PrimaryMask = (1u << PrimarySlots) - 1;
    private const uint OverflowMask = (1u << OverflowSlots) - 1;
    private const int CountOffset = 14;
    internal const int VersionOffset = 16;
    private const int EntriesOffset = 20;
    private const int NextOffset = 24;
    /// <summary>The largest key plus value the maps accept: 14 of them make a 14 KiB bucket.</summary>
    internal const int MaxEntryBytes = 1024;
    private const int SegmentTargetBytes = 64 * 1024;
    private const int ArenaChunkBytes = 64 * 1024;
    private const int ArenaHeaderBytes = 64;
    // Split while Count > primary slots x 17/20 (an 85% load of the primary slots; overflow takes the rest).
    private const int LoadNumerator = 17, LoadDenominator = 20;
    /// <summary>The split state's layout: the depth d in bits 0-7 (so <c>bzhi</c>, which reads its count's low byte, takes the
    /// state itself as its count), the released flag in bit 8 (<see cref="ReleasedBit"/>), the split pointer p in bits 9-48
    /// (so one shift extracts it, whatever the flag).</summary>
    private const int PointerShift = 9;
    /// <summary>The deepest table: 2^39 buckets (p then fits in the state's 40 pointer bits).</summary>
    private const int MaxDepth = 39;
    /// <summary>Above this a table sized up front is checked against the memory the process may use (see the constructor).</summary>
    private const long LargeTableBytes = 64L << 20;
    /// <summary>The split state's released flag: the table was released (<see cref="ReleaseUnderReaders"/>). The depth (bits
    /// 0-7) and the split pointer (bits 9-48) stay as they were, and neither reading sees the flag: the depth's readers take
    /// bits of the low byte (<see cref="Depth"/>, or <c>bzhi</c>'s reading of its count's low byte, or a shift's own count
    /// mask), and the split pointer's shift drops it. So a read that starts on a released table still computes the bucket it
    /// computed before, inside the directory (kept whole), and only its last check fails. A test of it is one instruction
    /// with its operand in memory.</summary>
    internal const long ReleasedBit = 1L << 8;
    private const int DepthMask = 63;

    internal static readonly int EntryBytes = sizeof(TKey) + sizeof(TValue);
    /// <summary>A primary bucket's entries, in its segment's entry block.</summary>
    internal static readonly int PrimaryEntriesBytes = RoundTo32(PrimarySlots * EntryBytes);
    /// <summary>A primary bucket's share of its segment: its header and its entries.</summary>
    internal static readonly int PrimaryBytes = HeaderBytes + PrimaryEntriesBytes;
    internal static readonly int OverflowBytes = RoundTo32(HeaderBytes + OverflowSlots * EntryBytes);
    internal static readonly int SegmentShift = BitOperations.Log2((uint)Math.Max(1, SegmentTargetBytes / PrimaryBytes));
    private static readonly long SegmentMask = (1L << SegmentShift) - 1;
    /// <summary>A full segment's bytes (a multiple of 64: at least 4 buckets of a multiple of 32 bytes).</summary>
    private static readonly long SegmentBytes = (1L << SegmentShift) * PrimaryBytes;
    /// <summary>A huge-page block's header: the next block of the table's chain, a line of its own.</summary>
    private const int HugeBlockHeaderBytes = 64;
    /// <summary>Full segments carved from one huge-page block, after its header.</summary>
    private static readonly int SegmentsPerHugeBlock = (int)((HugePageBlocks.GranuleBytes - HugeBlockHeaderBytes) / SegmentBytes);
    /// <summary>The first segment index carved from huge-page blocks: once the segments before it hold a granule's worth,
    /// so a block's unused remainder is at most what the table already holds (small maps never take a 2 MiB granule).</summary>
    internal static readonly int FirstHugeSegment = Math.Max(1, SegmentsPerHugeBlock);
    /// <summary>How many segments before <see cref="FirstHugeSegment"/> a growing table asks for its first ready block:
    /// the growth thread then has that many segments' splits (thousands of inserts) to map and fault it.</summary>
    internal const int SpareLeadSegments = 4;

    /// <summary>Tests under Coyote: split value copies in two halves with a scheduling point between (Coyote sees no native load or store).</summary>
    private static readonly bool s_interleave = AppContext.TryGetSwitch(InterleaveSwitch, out bool on) && on;
    internal const string InterleaveSwitch = "Manaloc.Collections.InterleaveNativeAccess";
    private static int s_schedulingPoint = 0;

    private readonly bool _concurrent;
    private readonly Func<TKey, ulong>? _hasher;
    private readonly string _owner;

    // Native state: the directory (byte** of segment entries, see DirectoryEntry) and the split state ((p << 9) | d) are
    // read by concurrent readers, so they change only by release stores; the rest is the writer's alone. The split state's
    // bit 8 (ReleasedBit) is the released flag: set once ReleaseUnderReaders begins (before any page is discarded), after which
    // no writer touches the table; a reader that sees it discards what it read. One word for both: a miss's last check
    // (its bucket, then the flag) is one load, and a hit's flag check loads a word the read loaded at its start.
    private nint _directory;
    private long _state;
    private int _directoryCapacity;
    private int _segmentCount;
    private long _firstSegmentBuckets;
    private long _count;
    private long _splitAt;
    private byte* _freeOverflow;
    private int _freeOverflowCount;
    private byte* _arenaChunks;
    private byte* _arenaCursor;
    private byte* _arenaEnd;
    // Huge-page blocks that segments FirstHugeSegment and on are carved from, chained through their headers.
    private byte* _hugeBlocks;
    private byte* _hugeCursor;
    private byte* _hugeEnd;
    // The next huge-page block, made ready off the writer's thread (see PrepareSpareBlock): published by the preparer
    // (compare-exchange from 0), taken by the writer or by Free (exchange to 0). Its bytes, while it waits, in _spareBytes.
    private nint _spareBlock;
    private long _spareBytes;
    private int _preparingSpare;
    // The writer's: a segment asked for the next block; the next insert that does not split requests it (see RequestSpareBlock).
    private bool _spareWanted;
    private bool _growing;
    private long _nativeBytes;
    private long _splits;
    private readonly List<(nint Block, long Bytes, BlockKind Kind)> _retired = [];
    private bool _freed;
    // Every block of a released table, its directories whole and its other pages discarded: unmapped by the finalizer.
    private List<(nint Block, long Bytes, BlockKind Kind)>? _heldUntilFinalized;

    /// <summary>Where a block came from, so it goes back the same way.</summary>
    private enum BlockKind : byte
    {
        /// <summary><see cref="NativeMemory.AlignedAlloc"/>: directories, and the first segments of a plain table.</summary>
        Heap,
        /// <summary><see cref="PageBlocks"/>: full segments below <see cref="FirstHugeSegment"/>, arena chunks, a concurrent table's first segments.</summary>
        Pages,
        /// <summary><see cref="HugePageBlocks"/>: the 2 MiB blocks later segments are carved from.</summary>
        HugePages,
    }

    /// <summary>The outcome of <see cref="SnapshotConcurrent"/> on a table that <see cref="ReleaseUnderReaders"/> released: read the map's table again.</summary>
    internal const int SnapshotOfReleased = int.MinValue;

    /// <summary>Tests: native bytes beyond this budget fail as the system's refusal would (out of memory).</summary>
    internal long AllocationBudget = long.MaxValue;

    internal NativeHashTable(long initialCapacity, Func<TKey, ulong>? hasher, string owner, bool concurrent, long allocationBudget = long.MaxValue)
    {
        // A plain table is freed by its map (whose finalizer reports a leak and keeps the memory); a concurrent one may be
        // held by a reader after its map let it go, so its finalizer gives back what ReleaseUnderReaders kept mapped (see there).
        if (!concurrent) GC.SuppressFinalize(this);
        _hasher = hasher;
        _owner = owner;
        _concurrent = concurrent;
        AllocationBudget = allocationBudget;
        long buckets = Math.Max(1, (initialCapacity * LoadDenominator + (long)PrimarySlots * LoadNumerator - 1) / ((long)PrimarySlots * LoadNumerator));
        int depth = buckets <= 1 ? 0 : BitOperations.Log2((ulong)(buckets - 1)) + 1;
        if (depth > MaxDepth) ThrowHelper.ThrowArgumentOutOfRange("options.InitialCapacity", initialCapacity, $"{owner}: the initial capacity is too large.");
        long total = 1L << depth;
        // A table sized up front writes every primary bucket's header here, so all of it becomes resident: a capacity
        // beyond the memory the process may use (physical memory, or the container's limit) would take the machine's
        // memory page by page, which an overcommitting system never refuses, until the process is killed. Refused before
        // anything is allocated, as Dictionary refuses a capacity it cannot allocate. Small tables skip the query.
        long tableBytes = total * PrimaryBytes;
        if (tableBytes > LargeTableBytes && MemoryTheProcessMayUse() is var available && tableBytes > available) ThrowHelper.ThrowMapCapacityTooLarge(owner, initialCapacity, tableBytes, available);
        try
        {
            _directoryCapacity = (int)Math.Max(4, (total + SegmentMask) >> SegmentShift);
            _directory = (nint)Allocate((long)_directoryCapacity * sizeof(nint));
            _firstSegmentBuckets = Math.Min(total, 1L << SegmentShift);
            ((byte**)_directory)[0] = DirectoryEntry(AllocateSegment(_firstSegmentBuckets), 0);
            _segmentCount = 1;
            for (long b = _firstSegmentBuckets; b < total; b += 1L << SegmentShift)
            {
                ((byte**)_directory)[_segmentCount] = DirectoryEntry(AllocateFullSegment(_segmentCount), _segmentCount);
                _segmentCount++;
            }
            _growing = true; // from here segments come from splits: the next huge-page block is worth making ready
        }
        catch (OutOfMemoryException)
        {
            Free();
            throw;
        }
        _state = StateOf(depth, 0);
        _splitAt = SplitThreshold(_state);
    }

    /// <summary>Physical memory or the container's limit, as the GC sees it.</summary>
    /// <remarks>Not <see cref="GCMemoryInfo.TotalAvailableMemoryBytes"/> alone: with a GC heap hard limit set it is that
    /// limit, which bounds the managed heap, not native memory. The high-memory-load threshold is a share (90% by
    /// default) of the machine's or the container's memory whatever the heap's limit, so the larger of the two is used.</remarks>
    private static long MemoryTheProcessMayUse()
    {
        var memory = GC.GetGCMemoryInfo();
        return Math.Max(memory.TotalAvailableMemoryBytes, memory.HighMemoryLoadThresholdBytes);
    }

    /// <summary>The count at which the next split runs: 85% of the primary slots of <paramref name="state"/>'s buckets.</summary>
    private static long SplitThreshold(long state)
        => ((1L << Depth(state)) + SplitPointer(state)) * PrimarySlots * LoadNumerator / LoadDenominator;

    public long Count => _concurrent ? Volatile.Read(ref _count) : _count;
    public long NativeBytes => Volatile.Read(ref _nativeBytes) + Volatile.Read(ref _spareBytes);

    /// <summary>Tests: the bytes of a huge-page block made ready and not yet taken (part of <see cref="NativeBytes"/>).</summary>
    internal long SpareBlockBytes => Volatile.Read(ref _spareBytes);

    /// <summary>Tests: segments in the directory.</summary>
    internal int SegmentCount => _segmentCount;

    /// <summary>Tests: where segment <paramref name="segment"/> (below <see cref="SegmentCount"/>) starts.</summary>
    internal nint SegmentAt(int segment) => (nint)SegmentOf(((byte**)_directory)[segment], segment);

    /// <summary>Tests: whether the growth thread is making the next huge-page block ready.</summary>
    internal bool IsPreparingSpareBlock => Volatile.Read(ref _preparingSpare) != 0;
    public long Splits => Volatile.Read(ref _splits);
    public long BucketCount
    {
        get
        {
            long state = Volatile.Read(ref _state);
            return (1L << Depth(state)) + SplitPointer(state);
        }
    }

    private static int RoundTo32(int bytes) => (bytes + 31) & ~31;

    /// <summary>The depth d of a split state, released or not (the mask keeps bits of the low byte; the flag is bit 8).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int Depth(long state) => (int)state & DepthMask;

    /// <summary>The split pointer p of a split state, released or not (the shift drops the flag; nothing is above p).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static long SplitPointer(long state) => state >> PointerShift;

    /// <summary>The split state of depth <paramref name="depth"/> and split pointer <paramref name="p"/>, not released.</summary>
    internal static long StateOf(int depth, long p) => (p << PointerShift) | (long)depth;

    /// <summary>Whether a split state has the released flag.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool IsReleasedState(long state) => (state & ReleasedBit) != 0;

    /// <summary>
    /// Loads before it complete before loads after it. x86/x64 never reorders loads with loads, and the JIT does not move a
    /// load across the volatile read that follows every use of this fence, so nothing is emitted there; elsewhere (Arm64)
    /// a full fence. Not <c>Volatile.ReadBarrier</c>: Coyote 1.7's rewriter replaces every <c>Volatile</c> call and predates that method (not tried).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void LoadLoadFence()
    {
        if (!System.Runtime.Intrinsics.X86.X86Base.IsSupported) Interlocked.MemoryBarrier();
    }

    /// <summary>Stores before it are visible before stores after it: nothing on x86/x64 (stores are not reordered with
    /// stores, and the JIT does not move a store above the volatile write it follows); a full fence elsewhere. Not
    /// <c>Volatile.WriteBarrier</c>, for the same reason as <see cref="LoadLoadFence"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void StoreStoreFence()
    {
        if (!System.Runtime.Intrinsics.X86.X86Base.IsSupported) Interlocked.MemoryBarrier();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ulong Hash(TKey key) => MapHashing.Hash(key, _hasher);

    /// <summary>The entry of <paramref name="key"/>, or null: <see cref="Find(TKey, ulong, out byte*)"/> with the hash taken here.</summary>
    /// <remarks>The delegate call of a custom hasher is in a method of its own, reached only as this method's whole result:
    /// nothing of the caller's lives across it, so the default path keeps its key and table in registers (with the call
    /// inline, the JIT stored both to the stack and loaded them back on every lookup).</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte* Find(TKey key) => _hasher is null ? Find(key, MapHashing.Hash(key, null), out _) : FindWithHasher(key);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private byte* FindWithHasher(TKey key) => Find(key, Hash(key), out _);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte Tag(ulong hash) => (byte)(0x80 | (hash >> 57));

    /// <summary>The bucket of <paramref name="hash"/>: its low d bits, or its low d+1 bits when those d bits are below the
    /// split pointer p.</summary>
    /// <remarks>Without a branch: whether the low bits fall below p is as random as the hash, so a branch would mispredict
    /// as often as p is from the ends of the round (half the time midway), and each misprediction flushes the lookups the
    /// processor had started behind this one (a lookup is two cache misses; overlapping them is its throughput). With
    /// BMI2, the comparison's sign becomes the count of hash bits to keep (d, or d+1) and one <c>bzhi</c> (the hash with its
    /// bits from the count up cleared) keeps them. The state holds d in its low byte, which is all of a count <c>bzhi</c>
    /// reads, so the state itself is the first count and the state minus the sign the second: seven instructions (with d
    /// in the high bits, extracting it and masking p out took nine), on the path of every lookup (see
    /// <see cref="TryGetConcurrentOnce(TKey, ulong, out TValue)"/>: the fewer instructions a lookup takes, the more lookups
    /// the processor overlaps). Not a conditional select of the two candidates: the JIT compiled that to the branch above.
    /// A released state gives the bucket it gave before the release: the flag (bit 8) is neither in the count's low byte
    /// nor in p's bits (the shift drops it), and adding one to d (at most 40) carries nothing into it.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long BucketIndex(ulong hash, long state)
    {
        if (Bmi2.X64.IsSupported)
        {
            // All ones when the low d bits are below p (both below 2^40: the difference cannot overflow), else zero; the
            // count's low byte then is d + 1 (at most 40: no carry out of the byte).
            ulong belowSplit = (ulong)(((long)Bmi2.X64.ZeroHighBits(hash, (ulong)state) - (state >> PointerShift)) >> 63);
            return (long)Bmi2.X64.ZeroHighBits(hash, (ulong)state - belowSplit);
        }
        // Not Depth(state): the two shifts below are its only uses, and a shift of a 64-bit value by an int uses the count's
        // low six bits (the C# rule, and what shlx does), which hold d (bits 6-7 of the state are zero), without the mask's
        // instruction (the JIT does not drop it).
        int d = (int)state;
        long low = (long)(hash & ((1UL << d) - 1));
        // All ones when low < p (as above), else zero.
        long below = (low - (state >> PointerShift)) >> 63;
        return low | ((long)hash & (1L << d) & below);
    }

    /// <summary>Bucket <paramref name="b"/>'s header: its segment's directory entry plus b headers (see <see cref="DirectoryEntry"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* BucketAt(byte** directory, long b)
        => directory[b >> SegmentShift] + b * HeaderBytes;

    /// <summary>What the directory holds for segment <paramref name="segment"/> at <paramref name="block"/>: the block less the
    /// headers of the buckets before the segment, so that a bucket's header is its entry plus its index's headers, with no
    /// mask of the index's bits within the segment (two instructions on every lookup). An address outside the block, never
    /// dereferenced: only <see cref="BucketAt"/> adds to it, with a bucket of this segment.</summary>
    private static byte* DirectoryEntry(byte* block, long segment) => block - (segment << SegmentShift) * HeaderBytes;

    /// <summary>The block of segment <paramref name="segment"/> from its directory entry (<see cref="DirectoryEntry"/>'s inverse).</summary>
    private static byte* SegmentOf(byte* entry, long segment) => entry + (segment << SegmentShift) * HeaderBytes;

    /// <summary>The first entry of <paramref name="bucket"/>: its header says where (a primary's in its segment's entry
    /// block, an overflow bucket's right after its header).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* Entries(byte* bucket) => bucket + *(int*)(bucket + EntriesOffset);

    /// <remarks>Unsigned: a slot is 0-13, and an <c>int</c> product was sign-extended, one instruction more on every hit.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* Entry(byte* bucket, int slot) => Entries(bucket) + (nuint)(uint)slot * (nuint)EntryBytes;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* NextOf(byte* bucket) => *(byte**)(bucket + NextOffset);

    /// <summary>The 16 header bytes: 14 tags, the count and a zero byte (not <c>Vector128.Load</c>: Coyote 1.7's rewriter
    /// cannot import a generic method with a <c>T*</c> parameter; this is the same unaligned load).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> LoadTags(byte* bucket) => Unsafe.ReadUnaligned<Vector128<byte>>(bucket);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Match(byte* bucket, byte tag) => Match(bucket, Vector128.Create(tag));

    /// <summary>The slots of <paramref name="bucket"/> whose tag is <paramref name="tags"/>'s (the tag in every byte): for a
    /// loop that broadcasts the tag once before it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Match(byte* bucket, Vector128<byte> tags)
        => Vector128.Equals(LoadTags(bucket), tags).ExtractMostSignificantBits() & PrimaryMask;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Occupied(byte* bucket)
        // Tags have their top bit set, empty slots are 0, and bytes 14-15 stay below 0x80: the top bits are the occupied slots.
        => LoadTags(bucket).ExtractMostSignificantBits() & PrimaryMask;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static TKey KeyAt(byte* entry) => Unsafe.ReadUnaligned<TKey>(entry);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref TValue ValueAt(byte* entry) => ref Unsafe.AsRef<TValue>(entry + sizeof(TKey));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static TValue ReadValue(byte* entry)
    {
        if (!s_interleave) return Unsafe.ReadUnaligned<TValue>(entry + sizeof(TKey));
        TValue value;
        CopyInHalves((byte*)&value, entry + sizeof(TKey));
        return value;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteValue(byte* entry, in TValue value)
    {
        if (!s_interleave)
        {
            Unsafe.WriteUnaligned(entry + sizeof(TKey), value);
            return;
        }
        TValue copy = value;
        CopyInHalves(entry + sizeof(TKey), (byte*)&copy);
    }

    private static void CopyInHalves(byte* destination, byte* source)
    {
        int half = sizeof(TValue) / 2;
        Buffer.MemoryCopy(source, destination, half, half);
        Volatile.Read(ref s_schedulingPoint); // a Coyote scheduling point between the halves
        Buffer.MemoryCopy(source + half, destination + half, sizeof(TValue) - half, sizeof(TValue) - half);
    }

    // ---- the writer's side (the map's thread, or under the concurrent map's writer lock) ----

    /// <summary>The entry of <paramref name="key"/>, or null; <paramref name="primary"/> is its chain's first bucket.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte* Find(TKey key, ulong hash, out byte* primary)
    {
        primary = BucketAt((byte**)_directory, BucketIndex(hash, _state));
        byte tag = Tag(hash);
        byte* bucket = primary;
        do
        {
            uint match = Match(bucket, tag);
            while (match != 0)
            {
                byte* entry = Entry(bucket, BitOperations.TrailingZeroCount(match));
                if (KeyAt(entry).Equals(key)) return entry;
                match &= match - 1;
            }
            bucket = NextOf(bucket);
        }
        while (bucket != null);
        return null;
    }

    /// <summary>Adds <paramref name="key"/>, which must be absent; returns its entry (the value written).</summary>
    /// <remarks>Allocates everything it needs before it changes anything: an <see cref="OutOfMemoryException"/> leaves
    /// the entries as they were (a split may have run: that moves entries between buckets, it adds or loses none).</remarks>
    public byte* Add(TKey key, ulong hash, in TValue value)
    {
        if (_count >= int.MaxValue) ThrowHelper.ThrowMapFull(_owner);
        if (_count >= _splitAt) Split();
        else if (_spareWanted) RequestSpareBlock(); // in an insert that does not split: its wake-up never adds to a segment's start
        byte* primary = BucketAt((byte**)_directory, BucketIndex(hash, _state));
        byte* bucket = primary;
        byte* last = primary;
        uint capacity = PrimaryMask;
        uint free = 0;
        while (true)
        {
            free = ~Occupied(bucket) & capacity;
            if (free != 0) break;
            last = bucket;
            bucket = NextOf(bucket);
            capacity = OverflowMask;
            if (bucket == null) break;
        }
        byte* fresh = null;
        if (free == 0)
        {
            EnsureFreeOverflow(1);
            fresh = PopFreeOverflow();
        }
        BeginWrite(primary);
        if (fresh != null)
        {
            // Plain stores: readers reach the new bucket only through the odd sequence of its chain.
            *(byte**)(last + NextOffset) = fresh;
            bucket = fresh;
            free = OverflowMask;
        }
        int slot = BitOperations.TrailingZeroCount(free);
        byte* entry = Entry(bucket, slot);
        Unsafe.WriteUnaligned(entry, key);
        WriteValue(entry, value);
        bucket[slot] = Tag(hash);
        bucket[CountOffset]++;
        EndWrite(primary);
        if (_concurrent) Volatile.Write(ref _count, _count + 1); // release: a reader of Count sees it after the entry
        else _count++;
        return entry;
    }

    /// <summary>Overwrites the value of an entry <see cref="Find(TKey, ulong, out byte*)"/> returned.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Replace(byte* primary, byte* entry, in TValue value)
    {
        BeginWrite(primary);
        WriteValue(entry, value);
        EndWrite(primary);
    }

    /// <summary>Removes an entry <see cref="Find(TKey, ulong, out byte*)"/> returned: its slot becomes a hole; nothing moves.</summary>
    public void Remove(byte* primary, byte* entry)
    {
        byte* bucket = primary;
        // The entry's bucket: the one whose entry range holds it (overflow buckets are smaller, and may lie side by side).
        while (!(entry >= Entries(bucket) && entry < Entries(bucket) + (bucket == primary ? PrimarySlots : OverflowSlots) * EntryBytes)) bucket = NextOf(bucket);
        int slot = (int)((entry - Entries(bucket)) / EntryBytes);
        BeginWrite(primary);
        bucket[slot] = 0;
        bucket[CountOffset]--;
        EndWrite(primary);
        if (_concurrent) Volatile.Write(ref _count, _count - 1);
        else _count--;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void BeginWrite(byte* primary)
    {
        if (!_concurrent) return;
        ref uint version = ref *(uint*)(primary + VersionOffset);
        Volatile.Write(ref version, version + 1);
        // The odd sequence must be visible before any store of the change (release orders only what came before).
        StoreStoreFence();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EndWrite(byte* primary)
    {
        if (!_concurrent) return;
        ref uint version = ref *(uint*)(primary + VersionOffset);
        // Release: every store of the change is visible before the even sequence that validates it.
        Volatile.Write(ref version, version + 1);
    }

    /// <summary>Splits bucket p into p and p + 2^d and advances the split state.</summary>
    private void Split()
    {
        long state = _state;
        int depth = Depth(state);
        long p = SplitPointer(state);
        long q = (1L << depth) + p;
        if (depth >= MaxDepth) return; // 2^39 buckets: no further growth (chains grow instead)
        EnsureBucket(q);
        byte** directory = (byte**)_directory;
        byte* source = BucketAt(directory, p);
        int entries = 0;
        for (byte* b = source; b != null; b = NextOf(b)) entries += b[CountOffset];
        EnsureFreeOverflow(entries > PrimarySlots ? (entries - PrimarySlots + OverflowSlots - 1) / OverflowSlots : 0);
        ulong bit = 1UL << depth;
        // A caller's hasher, or a key type's own GetHashCode, is user code and may throw. Thrown between the stores below,
        // it would leave entries copied to both halves or to neither and both sequences odd (every later reader of the
        // chain would spin for ever), so such a hash is taken for the whole chain before the first store: an exception
        // then leaves the table as it was. The runtime's own hashes (integers, char, Guid without a hasher) cannot
        // throw: for them the condition is a constant and the split hashes in its one pass, as before.
        ulong[]? upperHalf = MapHashing.HasRuntimeEquality<TKey>() && _hasher is null ? null : UpperHalfOf(source, bit, entries);
        // Throws nothing (the overflow buckets it may take are reserved above): the array goes back to the pool.
        MoveSplitEntries(source, BucketAt(directory, q), bit, upperHalf);
        if (upperHalf is not null) System.Buffers.ArrayPool<ulong>.Shared.Return(upperHalf);

        long next2 = p + 1 == (1L << depth) ? StateOf(depth + 1, 0) : StateOf(depth, p + 1);
        // Release, before either sequence is even again: a reader that validates against a sequence after this split
        // also reads this state, and goes to the bucket its hash now belongs to.
        Volatile.Write(ref _state, next2);
        EndWrite(BucketAt(directory, q));
        EndWrite(source);
        _splitAt = SplitThreshold(next2);
        Volatile.Write(ref _splits, _splits + 1); // statistics only
    }

    /// <summary>For a split by <paramref name="bit"/>: one bit per entry of the chain at <paramref name="source"/>, in the
    /// order <see cref="MoveSplitEntries"/> visits them (chain order, then slot order), set when the entry goes to the upper
    /// half. Reads only; the array is rented from the shared pool (the split returns it).</summary>
    private ulong[] UpperHalfOf(byte* source, ulong bit, int entries)
    {
        ulong[] upperHalf = System.Buffers.ArrayPool<ulong>.Shared.Rent(Math.Max(1, (entries + 63) >> 6));
        try
        {
            Array.Clear(upperHalf);
            int index = 0;
            for (byte* b = source; b != null; b = NextOf(b))
            {
                uint occupied = Occupied(b);
                while (occupied != 0)
                {
                    int slot = BitOperations.TrailingZeroCount(occupied);
                    occupied &= occupied - 1;
                    if ((Hash(KeyAt(Entry(b, slot))) & bit) != 0) upperHalf[index >> 6] |= 1UL << index;
                    index++;
                }
            }
        }
        catch
        {
            System.Buffers.ArrayPool<ulong>.Shared.Return(upperHalf);
            throw;
        }
        return upperHalf;
    }

    /// <summary>The split's stores: makes both sequences odd and divides the chain at <paramref name="source"/> between it and
    /// <paramref name="target"/> (the caller publishes the new state and makes the sequences even). <paramref name="upperHalf"/>
    /// is <see cref="UpperHalfOf"/>'s, or null to hash each entry here (only for hashes that cannot throw).</summary>
    private void MoveSplitEntries(byte* source, byte* target, ulong bit, ulong[]? upperHalf)
    {
        BeginWrite(source);
        BeginWrite(target);
        int index = 0;
        byte* writeBucket = source;
        byte* beforeWrite = null;
        int writeSlot = 0;
        int writeCapacity = PrimarySlots;
        byte* appendBucket = target;
        int appendSlot = 0;
        int appendCapacity = PrimarySlots;
        for (byte* read = source; read != null; read = NextOf(read))
        {
            uint occupied = Occupied(read);
            while (occupied != 0)
            {
                int slot = BitOperations.TrailingZeroCount(occupied);
                occupied &= occupied - 1;
                byte* entry = Entry(read, slot);
                byte tag = read[slot];
                bool upper = upperHalf is null ? (Hash(KeyAt(entry)) & bit) != 0 : (upperHalf[index >> 6] & (1UL << index)) != 0;
                index++;
                if (upper)
                {
                    if (appendSlot == appendCapacity)
                    {
                        byte* fresh = PopFreeOverflow();
                        *(byte**)(appendBucket + NextOffset) = fresh;
                        appendBucket = fresh;
                        appendSlot = 0;
                        appendCapacity = OverflowSlots;
                    }
                    Buffer.MemoryCopy(entry, Entry(appendBucket, appendSlot), EntryBytes, EntryBytes);
                    appendBucket[appendSlot++] = tag;
                    appendBucket[CountOffset]++;
                }
                else
                {
                    if (writeSlot == writeCapacity)
                    {
                        writeBucket[CountOffset] = (byte)writeCapacity;
                        beforeWrite = writeBucket;
                        writeBucket = NextOf(writeBucket);
                        writeSlot = 0;
                        writeCapacity = OverflowSlots;
                    }
                    // The write position never passes the read position, so this copies an entry already read.
                    byte* to = Entry(writeBucket, writeSlot);
                    if (to != entry) Buffer.MemoryCopy(entry, to, EntryBytes, EntryBytes);
                    writeBucket[writeSlot++] = tag;
                }
            }
        }
        // Clear what the compaction left behind: the last written bucket's tail, and every bucket after it.
        for (int slot = writeSlot; slot < writeCapacity; slot++) writeBucket[slot] = 0;
        writeBucket[CountOffset] = (byte)writeSlot;
        byte* rest = NextOf(writeBucket);
        if (writeSlot == 0 && beforeWrite != null)
        {
            rest = writeBucket;
            writeBucket = beforeWrite;
        }
        *(byte**)(writeBucket + NextOffset) = null;
        while (rest != null)
        {
            byte* next = NextOf(rest);
            PushFreeOverflow(rest);
            rest = next;
        }
    }

    /// <summary>Makes bucket <paramref name="b"/> (the next to be created) addressable: its segment allocated and in the directory.</summary>
    private void EnsureBucket(long b)
    {
        long segment = b >> SegmentShift;
        if (segment == 0)
        {
            if (b >= _firstSegmentBuckets) GrowFirstSegment();
            return;
        }
        if (segment < _segmentCount) return;
        Debug.Assert(segment == _segmentCount, "buckets are created in order");
        if (segment >= _directoryCapacity) GrowDirectory();
        byte* block = AllocateFullSegment((int)segment);
        // Plain store: readers address this segment only after the split state that makes its first bucket exist,
        // published by a release store after this one.
        ((byte**)_directory)[segment] = DirectoryEntry(block, segment);
        _segmentCount++;
    }

    private void GrowFirstSegment()
    {
        long buckets = _firstSegmentBuckets * 2;
        byte* old = SegmentOf(((byte**)_directory)[0], 0);
        long headers = _firstSegmentBuckets * HeaderBytes, entries = _firstSegmentBuckets * PrimaryEntriesBytes;
        byte* copy = AllocateFirstSegmentBlock(buckets * PrimaryBytes);
        Buffer.MemoryCopy(old, copy, headers, headers);
        Buffer.MemoryCopy(old + headers, copy + buckets * HeaderBytes, entries, entries);
        // After the headers' copy: every header of the copy says where its entries are in the copy's larger layout.
        SetEntryOffsets(copy, buckets);
        // Release: the copy is complete before a reader can find it.
        Volatile.Write(ref *(nint*)_directory, (nint)DirectoryEntry(copy, 0));
        if (_concurrent)
        {
            // Every sequence of the old block odd for good, after the directory points to the copy (release stores, in
            // order): a reader still on the old block retries, re-reads the directory and finds the copy.
            for (long b = 0; b < _firstSegmentBuckets; b++)
            {
                ref uint version = ref *(uint*)(old + b * HeaderBytes + VersionOffset);
                Volatile.Write(ref version, version | 1);
            }
        }
        Retire(old, _firstSegmentBuckets * PrimaryBytes, FirstSegmentKind);
        _firstSegmentBuckets = buckets;
    }

    private void GrowDirectory()
    {
        int capacity = _directoryCapacity * 2;
        byte** grown = (byte**)Allocate((long)capacity * sizeof(nint));
        Buffer.MemoryCopy((void*)_directory, grown, (long)_directoryCapacity * sizeof(nint), (long)_directoryCapacity * sizeof(nint));
        nint old = _directory;
        long oldBytes = (long)_directoryCapacity * sizeof(nint);
        // Release: a reader that reads the new directory reads its copied pointers.
        Volatile.Write(ref _directory, (nint)grown);
        _directoryCapacity = capacity;
        Retire((byte*)old, oldBytes, BlockKind.Heap);
    }

    private void Retire(byte* block, long bytes, BlockKind kind)
    {
        if (_concurrent) _retired.Add(((nint)block, bytes, kind));
        else if (kind == BlockKind.Heap) Release(block, bytes);
        else ReleasePages(block, bytes);
    }

    /// <summary>First segments: in concurrent mode page mappings, like every other block a reader can reach except the
    /// directory, so <see cref="ReleaseUnderReaders"/> can discard their pages under a reader; in plain mode from the heap (a small
    /// map's first segment is a few hundred bytes, not a page).</summary>
    private BlockKind FirstSegmentKind => _concurrent ? BlockKind.Pages : BlockKind.Heap;

    private byte* AllocateFirstSegmentBlock(long bytes) => _concurrent ? AllocatePages(bytes) : Allocate(bytes);

    private void EnsureFreeOverflow(int wanted)
    {
        while (_freeOverflowCount < wanted)
        {
            if (_arenaCursor == null || _arenaCursor + OverflowBytes > _arenaEnd)
            {
                byte* chunk = AllocatePages(ArenaChunkBytes);
                *(byte**)chunk = _arenaChunks;
                _arenaChunks = chunk;
                _arenaCursor = chunk + ArenaHeaderBytes;
                _arenaEnd = chunk + ArenaChunkBytes;
            }
            byte* bucket = _arenaCursor;
            _arenaCursor += OverflowBytes;
            *(int*)(bucket + EntriesOffset) = HeaderBytes; // an overflow bucket's entries follow its header
            PushFreeOverflow(bucket);
        }
    }

    private byte* PopFreeOverflow()
    {
        byte* bucket = _freeOverflow;
        Debug.Assert(bucket != null, "EnsureFreeOverflow ran first");
        _freeOverflow = NextOf(bucket);
        *(byte**)(bucket + NextOffset) = null;
        _freeOverflowCount--;
        return bucket;
    }

    private void PushFreeOverflow(byte* bucket)
    {
        // A free bucket's tags are all 0: a stale reader that reaches it matches nothing (and then fails its sequence check).
        *(Vector128<byte>*)bucket = Vector128<byte>.Zero;
        *(byte**)(bucket + NextOffset) = _freeOverflow;
        _freeOverflow = bucket;
        _freeOverflowCount++;
    }

    /// <summary>A zeroed segment of <paramref name="buckets"/> primary buckets: their headers side by side, then their entries.</summary>
    /// <remarks>Why apart: a lookup's first access is the header (tags, sequence), and the headers of the whole table are
    /// 32 bytes per 14 slots, small enough to stay in the processor's caches and its TLB's reach while the entries are not;
    /// so most lookups miss once (the entry), not twice.</remarks>
    private byte* AllocateSegment(long buckets)
    {
        byte* block = AllocateFirstSegmentBlock(buckets * PrimaryBytes);
        SetEntryOffsets(block, buckets);
        return block;
    }

    /// <summary>Full segment <paramref name="segment"/> (1 and on): from the system below <see cref="FirstHugeSegment"/>,
    /// carved from a huge-page block from there on.</summary>
    /// <remarks>Why huge pages: a lookup's two accesses (header, entry) land anywhere in a table of tens of megabytes; on
    /// 4 KiB pages each also misses the TLB and walks the page tables, on 2 MiB pages the whole table stays within the
    /// TLB's reach. The cost: the table's memory grows by 2 MiB granules (at most one granule, less its header and
    /// tail, unused, plus the next block made ready), and a huge page's first touch is one fault that zeroes 2 MiB at
    /// once, milliseconds in a virtual machine: so the next block is mapped and touched by the process's growth thread
    /// (<see cref="RequestSpareBlock"/>, <see cref="GrowthPreparer"/>; asked <see cref="SpareLeadSegments"/> segments before the first huge one, and as
    /// soon as the table starts a block), and the insert that starts the following block takes it ready. When the growth
    /// thread has not made it ready yet, that insert maps a block on base pages (<see cref="HugePageBlocks.AllocateOnBasePages"/>),
    /// faulted in page by page as its segments fill, never a huge page's fault; the constructor (a table sized up front,
    /// not yet growing) maps its blocks on huge pages itself. A table that stops growing keeps one block ready (counted
    /// in <see cref="NativeBytes"/>) until Clear or Dispose.</remarks>
    private byte* AllocateFullSegment(int segment)
    {
        // Every segment from SpareLeadSegments before the first huge one asks (a no-op while a block is ready or on its
        // way): the first block's request gets that many segments' splits to be served, and a request the writer made
        // while the growth thread was still finishing the last one is made again at the next segment.
        if (segment + SpareLeadSegments >= FirstHugeSegment) _spareWanted = _growing;
        if (segment < FirstHugeSegment)
        {
            byte* own = AllocatePages(SegmentBytes);
            SetEntryOffsets(own, 1L << SegmentShift);
            return own;
        }
        if (_hugeCursor == null || _hugeCursor + SegmentBytes > _hugeEnd)
        {
            if (_nativeBytes + HugePageBlocks.GranuleBytes > AllocationBudget) ThrowHelper.ThrowMapOutOfMemory(_owner, HugePageBlocks.GranuleBytes);
            byte* block = (byte*)Interlocked.Exchange(ref _spareBlock, 0);
            if (block != null)
            {
                Volatile.Write(ref _spareBytes, 0);
            }
            else
            {
                // No block ready. In an insert (growing): this one on base pages, faulted in page by page as its segments
                // fill, not one huge page's fault (a 2 MiB zeroing, milliseconds in a virtual machine) in this insert; its
                // lookups miss the TLB more. In the constructor (a table sized up front): on huge pages, faulted here.
                try
                {
                    block = _growing ? HugePageBlocks.AllocateOnBasePages(HugePageBlocks.GranuleBytes) : HugePageBlocks.Allocate(HugePageBlocks.GranuleBytes);
                }
                catch (OutOfMemoryException)
                {
                    ThrowHelper.ThrowMapOutOfMemory(_owner, HugePageBlocks.GranuleBytes);
                    return null;
                }
            }
            Volatile.Write(ref _nativeBytes, _nativeBytes + HugePageBlocks.GranuleBytes); // statistics only
            _spareWanted = _growing;
            *(byte**)block = _hugeBlocks;
            _hugeBlocks = block;
            _hugeCursor = block + HugeBlockHeaderBytes;
            _hugeEnd = block + HugeBlockHeaderBytes + (long)SegmentsPerHugeBlock * SegmentBytes;
        }
        byte* carved = _hugeCursor;
        _hugeCursor += SegmentBytes;
        // Zero-filled by the system (a block is never reused: Clear makes a new table), so every tag and sequence starts
        // at 0. The entry offsets are plain stores, as a system-allocated segment's: readers reach the segment only through
        // its directory slot and the split state that makes its first bucket exist, published by a release store after them.
        SetEntryOffsets(carved, 1L << SegmentShift);
        return carved;
    }

    /// <summary>Tests: runs on the growth thread between making a block ready and offering it, so a test can order
    /// the offer after <see cref="Free"/>. Per instantiation: a test uses a value type of its own.</summary>
    internal static Action? TestHookBeforeSpareOffer;

    /// <summary>Asks the growth thread (<see cref="GrowthPreparer"/>) to make the next huge-page block ready, unless one is
    /// ready or on its way, or the table is still being built to its initial capacity (a table sized up front may never grow).</summary>
    /// <remarks>Called by an insert that does not split, the one after the segment that wanted the block: the request's
    /// wake-up of the growth thread (tens of microseconds on a virtual machine) then never lands in the insert that also
    /// maps and faults in a segment.</remarks>
    private void RequestSpareBlock()
    {
        _spareWanted = false;
        if (!_growing || Volatile.Read(ref _spareBlock) != 0 || Interlocked.Exchange(ref _preparingSpare, 1) != 0) return;
        // The table is the request (an IThreadPoolWorkItem run by the growth thread): nothing allocated. Without a growth thread the writer maps its next block itself.
        if (!GrowthPreparer.Request(this)) Volatile.Write(ref _preparingSpare, 0);
    }

    void IThreadPoolWorkItem.Execute() => PrepareSpareBlock();

    /// <summary>
    /// On the growth thread (<see cref="GrowthPreparer"/>): maps a huge-page block, touches it (the kernel faults in and zeroes its huge page here,
    /// not in an insert) and offers it to the writer.
    /// </summary>
    /// <remarks>
    /// Ownership: a block is owned by whoever takes it out of <see cref="_spareBlock"/> by an exchange to 0: the writer
    /// starting a block, or <see cref="FreeSpareBlock"/>; an exchange is atomic, so exactly one of them gets it and it is
    /// freed once. A block offered after <see cref="Free"/> must not leak: Free stores <c>_freed</c> and then exchanges
    /// (a full fence); the preparer compare-exchanges (a full fence) and then reads <c>_freed</c>. Either Free's exchange
    /// comes after the offer and takes the block, or the preparer's read comes after Free's store and sees it, and takes
    /// the block back itself (both may try; one gets it). At most one preparation runs at a time (<c>_preparingSpare</c>),
    /// so an offer never finds another block waiting. If the system refuses the memory, no block is offered and the
    /// writer maps one itself, where a refusal is the caller's out-of-memory error.
    /// </remarks>
    private void PrepareSpareBlock()
    {
        try
        {
            if (Volatile.Read(ref _freed)) return;
            byte* block;
            try
            {
                block = HugePageBlocks.Allocate(HugePageBlocks.GranuleBytes);
            }
            catch (OutOfMemoryException)
            {
                return;
            }
            Volatile.Write(ref *block, (byte)0); // the first touch: the huge page's fault and zeroing happen here
            TestHookBeforeSpareOffer?.Invoke();
            Volatile.Write(ref _spareBytes, HugePageBlocks.GranuleBytes);
            if (Interlocked.CompareExchange(ref _spareBlock, (nint)block, 0) != 0)
            {
                HugePageBlocks.Free(block, HugePageBlocks.GranuleBytes); // cannot happen (one preparation at a time); never leak
                return;
            }
            if (Volatile.Read(ref _freed)) FreeSpareBlock();
        }
        finally
        {
            Volatile.Write(ref _preparingSpare, 0);
        }
    }

    /// <summary>Frees the waiting block, if this call is the one that takes it.</summary>
    private void FreeSpareBlock(bool countBytes = true)
    {
        byte* block = (byte*)Interlocked.Exchange(ref _spareBlock, 0);
        if (block == null) return;
        if (countBytes) Volatile.Write(ref _spareBytes, 0);
        HugePageBlocks.Free(block, HugePageBlocks.GranuleBytes);
    }

    /// <summary>Writes where each header's entries are. Plain stores: readers reach a segment only after a release store
    /// that follows them (the split state for a new segment, the directory for a grown first one).</summary>
    private static void SetEntryOffsets(byte* block, long buckets)
    {
        for (long b = 0; b < buckets; b++)
        {
            *(int*)(block + b * HeaderBytes + EntriesOffset) = (int)(buckets * HeaderBytes + b * PrimaryEntriesBytes - b * HeaderBytes);
        }
    }

    private byte* Allocate(long bytes)
    {
        if (_nativeBytes + bytes > AllocationBudget) ThrowHelper.ThrowMapOutOfMemory(_owner, bytes);
        byte* block;
        try
        {
            block = (byte*)NativeMemory.AlignedAlloc((nuint)bytes, 64);
        }
        catch (OutOfMemoryException)
        {
            ThrowHelper.ThrowMapOutOfMemory(_owner, bytes);
            return null;
        }
        NativeMemory.Clear(block, (nuint)bytes);
        Volatile.Write(ref _nativeBytes, _nativeBytes + bytes); // statistics only
        return block;
    }

    private void Release(byte* block, long bytes)
    {
        NativeMemory.AlignedFree(block);
        Volatile.Write(ref _nativeBytes, _nativeBytes - bytes);
    }

    /// <summary>A zeroed block whose pages are faulted in on their first touch (<see cref="PageBlocks"/>): for the full
    /// segments and arena chunks an insert starts, so no insert pays for all their pages at once.</summary>
    /// <remarks>Readers: a page not yet faulted in reads as zeros (the kernel's zero page), as a cleared one does, and a
    /// reader reaches the block only through a pointer the writer publishes after its stores (a segment's directory slot
    /// and the split state's release store; an overflow bucket through its chain's odd sequence), as before: the
    /// ordering argument of the class remarks is unchanged.</remarks>
    private byte* AllocatePages(long bytes)
    {
        if (_nativeBytes + bytes > AllocationBudget) ThrowHelper.ThrowMapOutOfMemory(_owner, bytes);
        byte* block = PageBlocks.TryAllocate(bytes);
        if (block == null) ThrowHelper.ThrowMapOutOfMemory(_owner, bytes);
        Volatile.Write(ref _nativeBytes, _nativeBytes + bytes); // statistics only
        return block;
    }

    private void ReleasePages(byte* block, long bytes)
    {
        PageBlocks.Free(block, bytes);
        Volatile.Write(ref _nativeBytes, _nativeBytes - bytes);
    }

    /// <summary>Gives every native byte back: a plain table, or a concurrent one that no reader can hold (where pages cannot
    /// be discarded, after <see cref="ReaderGate.WaitForReaders"/>; a table whose construction failed).</summary>
    public void Free() => FreeBlocks(countBytes: true);

    /// <summary>Frees every block. <paramref name="countBytes"/>: whether <see cref="NativeBytes"/> falls to 0 (not from the
    /// finalizer: the map's finalizer may report this table's bytes as a leak after it, in either order).</summary>
    private void FreeBlocks(bool countBytes)
    {
        if (_freed) return;
        Volatile.Write(ref _freed, true);
        FreeSpareBlock(countBytes); // after the store of _freed: see PrepareSpareBlock
        foreach (var (block, bytes, kind) in TakeBlocks()) FreeBlock((byte*)block, bytes, kind);
        _directory = 0;
        if (countBytes) Volatile.Write(ref _nativeBytes, 0);
    }

    /// <summary>
    /// Concurrent mode, where <see cref="PageBlocks.CanDiscard"/>: called once the map has unpublished the table (Clear,
    /// Dispose; a reader may still be inside it). Gives the pages back to the system but keeps every address a reader can
    /// reach mapped and readable until the table object is collected (its finalizer unmaps them): a racing read sees the
    /// old bytes or zeros, never a fault, and then sees <see cref="IsReleased"/> and discards what it read.
    /// </summary>
    /// <remarks>
    /// <para>What stays: the directories (the current one and those growth replaced) are kept whole, not discarded, so a
    /// reader never follows a zeroed segment pointer (they are 8 bytes per 64 KiB segment). Every other block a reader
    /// can reach (segments, the first segment and its replaced copies, arena chunks, huge-page blocks) is discarded: a
    /// zeroed header has tags 0 (they never match: a tag has its top bit set), count 0, sequence 0 and no next bucket, so
    /// a probe over any mix of old and zeroed bytes ends in a miss or on an old entry, inside the block it started in
    /// (an entry offset read as 0 makes the entries start at the header, which keeps them inside the block).</para>
    /// <para>Ordering: why a reader that read any byte this call zeroed sees the flag. (1) Store the flag (the split state's bit 8,
    /// an interlocked or); (2) a
    /// process-wide barrier (<see cref="Interlocked.MemoryBarrierProcessWide"/>: every processor running a thread of the
    /// process executes a full fence after (1) is visible); (3) discard the pages. A reader does its data loads, then a
    /// load-load fence (<see cref="LoadLoadFence"/>: the data loads are complete before the next load, on Arm64 too, where
    /// loads may otherwise pass loads) and the sequence re-read, then loads the split state (acquire: ldar on Arm64, a plain
    /// load on x64, where loads are not reordered with loads) and tests the flag. A zero from (3) can only be
    /// read by a load that executes after (3) began, so after the barrier of (2) on that reader's processor; its flag load
    /// comes after that load, so after the barrier, and reads (1). A reader whose loads all ran before the barrier read
    /// no zero of (3) (only the old bytes, which the seqlock validates as before). The argument needs no property of x86
    /// (TSO) nor of the kernel's page-table updates beyond "a zero appears after the call starts". The flag is read from
    /// this object after the reader's last native load, so the object stays reachable (and the finalizer cannot unmap)
    /// until then.</para>
    /// <para>The cost: one process-wide barrier per Clear or Dispose (as the reader gate's was), a managed list of the
    /// table's blocks, and its address space and directories until the next collection that finds the table unreachable.</para>
    /// </remarks>
    public void ReleaseUnderReaders()
    {
        Debug.Assert(_concurrent && PageBlocks.CanDiscard, "a plain table is freed; a gated one after the gate's wait");
        if (_freed) return;
        // The flag in the split state's bit 8; no writer changes the state any more (the map unpublished the table
        // under its writer lock), so the state's other bits stay what readers compute their buckets with.
        Interlocked.Or(ref _state, ReleasedBit);
        Interlocked.MemoryBarrierProcessWide();
        Volatile.Write(ref _freed, true);
        FreeSpareBlock(countBytes: true); // after the store of _freed: see PrepareSpareBlock
        var blocks = TakeBlocks();
        foreach (var (block, bytes, kind) in blocks)
        {
            if (kind == BlockKind.Pages) PageBlocks.Discard((byte*)block, bytes);
            else if (kind == BlockKind.HugePages) HugePageBlocks.Discard((byte*)block, bytes);
        }
        _heldUntilFinalized = blocks;
        Volatile.Write(ref _nativeBytes, 0);
    }

    /// <summary>Whether <see cref="ReleaseUnderReaders"/> released the table (a reader that sees it discards what it read).</summary>
    internal bool IsReleased => IsReleasedState(Volatile.Read(ref _state));

    /// <summary>Tests: sets the released flag alone, the pages left whole, so a read whose data all validates shows whether it checks the flag.</summary>
    internal void MarkReleasedForTests() => Interlocked.Or(ref _state, ReleasedBit);

    /// <summary>Tests: what ReleaseUnderReaders keeps mapped until the finalizer.</summary>
    internal int BlocksHeldUntilFinalized => _heldUntilFinalized?.Count ?? 0;

    /// <summary>A concurrent table the GC found unreachable: no reader holds it, so every block it still has can go.</summary>
    ~NativeHashTable()
    {
        if (_heldUntilFinalized is { } held)
        {
            foreach (var (block, bytes, kind) in held) FreeBlock((byte*)block, bytes, kind);
            held.Clear();
            return;
        }
        FreeBlocks(countBytes: false);
    }

    /// <summary>Every block the table holds, in a list, and the writer's view of them emptied (the directory pointer and the
    /// split state stay: a released table's readers still use them). Reads the chains of arena chunks and huge-page
    /// blocks (their links live in the blocks), so before anything is discarded or freed.</summary>
    private List<(nint Block, long Bytes, BlockKind Kind)> TakeBlocks()
    {
        var blocks = new List<(nint Block, long Bytes, BlockKind Kind)>(_retired.Count + Math.Min(_segmentCount, FirstHugeSegment) + 8);
        byte** directory = (byte**)_directory;
        if (directory != null)
        {
            if (_segmentCount > 0) blocks.Add(((nint)SegmentOf(directory[0], 0), _firstSegmentBuckets * PrimaryBytes, FirstSegmentKind));
            for (int s = 1; s < Math.Min(_segmentCount, FirstHugeSegment); s++) blocks.Add(((nint)SegmentOf(directory[s], s), SegmentBytes, BlockKind.Pages));
            blocks.Add((_directory, (long)_directoryCapacity * sizeof(nint), BlockKind.Heap));
        }
        _segmentCount = 0;
        for (byte* chunk = _arenaChunks; chunk != null; chunk = *(byte**)chunk) blocks.Add(((nint)chunk, ArenaChunkBytes, BlockKind.Pages));
        _arenaChunks = _arenaCursor = _arenaEnd = _freeOverflow = null;
        for (byte* block = _hugeBlocks; block != null; block = *(byte**)block) blocks.Add(((nint)block, HugePageBlocks.GranuleBytes, BlockKind.HugePages));
        _hugeBlocks = _hugeCursor = _hugeEnd = null;
        blocks.AddRange(_retired);
        _retired.Clear();
        return blocks;
    }

    private static void FreeBlock(byte* block, long bytes, BlockKind kind)
    {
        switch (kind)
        {
            case BlockKind.Heap: NativeMemory.AlignedFree(block); break;
            case BlockKind.Pages: PageBlocks.Free(block, bytes); break;
            default: HugePageBlocks.Free(block, bytes); break;
        }
    }

    // ---- lock-free readers (concurrent mode) ----

    /// <summary>One validated attempt: 1 found (the value seen whole, never a mix of two writes), 0 absent, -1 retry (a
    /// writer was in the chain, or the table was released: the caller reads the map's table again).</summary>
    /// <remarks>Inlined into the caller (a lookup is memory-bound: the fewer instructions around its two cache misses, the
    /// more lookups the processor overlaps); the caller's retry loop is out of line.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int TryGetConcurrentOnce(TKey key, ulong hash, out TValue value) => TryGetConcurrentOnce(key, hash, out value, out _, out _);

    /// <summary>As <see cref="TryGetConcurrentOnce(TKey, ulong, out TValue)"/>, also handing back the chain it read and the
    /// even sequence that validated it: under the writer lock, <see cref="IsUnchangedSince"/> then tells whether any writer
    /// changed that chain since.</summary>
    public int TryGetConcurrentOnce(TKey key, ulong hash, out TValue value, out byte* primary, out uint sequence)
        => TryGetConcurrentAttempt(key, hash, out value, out primary, out sequence);

    /// <summary>Under the writer lock: whether <paramref name="primary"/> is still the chain of <paramref name="hash"/> and no
    /// writer changed that chain since a read validated it against <paramref name="sequence"/>.</summary>
    /// <remarks>Ordering: every writer changes the sequence (odd, then even again) under the lock around any change of the
    /// chain, a split of its bucket included; taking the lock orders this plain load after every earlier writer's stores,
    /// so it sees the current sequence. Within one table a sequence only grows (2 per write) and a primary bucket's
    /// address never serves another chain (replaced first segments stay allocated until the table is freed), so equal
    /// means unchanged, as it does for the lock-free read itself (which assumes no 2^31 writes to one chain while it reads).</remarks>
    public bool IsUnchangedSince(ulong hash, byte* primary, uint sequence)
        => BucketAt((byte**)_directory, BucketIndex(hash, _state)) == primary && *(uint*)(primary + VersionOffset) == sequence;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int TryGetConcurrentAttempt(TKey key, ulong hash, out TValue value, out byte* primary, out uint seen)
    {
        long state = Volatile.Read(ref _state);
        byte** directory = (byte**)Volatile.Read(ref _directory);
        primary = BucketAt(directory, BucketIndex(hash, state));
        ref uint sequence = ref *(uint*)(primary + VersionOffset);
        // Even: an odd sequence (a writer in the chain) is kept as the even number below it, which no later read of the
        // sequence can equal (a sequence only grows, and a read assumes fewer than 2^31 writes to its chain while it
        // runs), so the re-read's one comparison is also the odd test (a test and a branch fewer on every lookup). A
        // sequence zeroed by a release may equal it; the released flag, checked after it, catches that.
        seen = Volatile.Read(ref sequence) & ~1u;
        // Probing while the sequence is odd is harmless: everything read is discarded unless the checks below pass.
        // The tag broadcast once, outside the loop: left to the JIT, the loop with a return inside it broadcast it at every
        // bucket and kept the tag byte on the stack.
        var tags = Vector128.Create(Tag(hash));
        byte* bucket = primary;
        while (true)
        {
            uint match = Match(bucket, tags);
            while (match != 0)
            {
                byte* entry = Entry(bucket, BitOperations.TrailingZeroCount(match));
                if (KeyAt(entry).Equals(key))
                {
                    value = ReadValue(entry);
                    // The hit's checks in its own arm, each failure a constant: the caller's test of the outcome then folds
                    // into them (one outcome merged from the hit, the miss and the retries was tested three times on a hit).
                    // The probe's loads before the re-reads. A hit needs only the sequence: the chain held the key,
                    // unchanged, for the whole probe. Last, the table not released (see the miss below).
                    LoadLoadFence();
                    if (Volatile.Read(ref sequence) != seen || IsReleasedState(Volatile.Read(ref _state))) return -1;
                    return 1;
                }
                match &= match - 1;
            }
            bucket = (byte*)Volatile.Read(ref *(nint*)(bucket + NextOffset));
            if (bucket == null) break;
            // At each hop: a chain relinked under the reader (a bucket recycled) changed the sequence first.
            if (Volatile.Read(ref sequence) != seen)
            {
                value = default;
                return -1;
            }
        }
        value = default;
        LoadLoadFence();
        if (Volatile.Read(ref sequence) != seen) return -1;
        // A miss also needs the bucket: a split that ended before the first read of the sequence may have moved the key to
        // the other half. The split state unchanged proves it (a split that moved nothing of this chain retries too: rare,
        // one split in about twelve inserts, and a retry is another read); comparing the states rather than the buckets
        // keeps one value live through the probe where the buckets kept two (the hash and the bucket), one register
        // fewer for the caller's loop around an inlined read. The state re-read after the sequence's is also the released
        // check, the last load of the read: zeroed pages pass the checks before (a sequence 0 reads 0 again), and a tag
        // read before the discard with a value read after it is torn; a reader that read any zero sees the flag
        // (ReleaseUnderReaders's ordering argument), and this load of a field of the table keeps it reachable past every
        // native load above. A read that began on a released table reads the same released state again, so the flag
        // needs its own test: one test of a bit.
        long after = Volatile.Read(ref _state);
        if (after != state || IsReleasedState(after)) return -1;
        return 0;
    }

    /// <summary>
    /// Copies the chain of the bucket that holds the split-ordered position <paramref name="position"/> (the hash's
    /// bits reversed) into <paramref name="buffer"/>, keeping only entries at or after the position, validated as a
    /// lookup is. Returns how many, or -1 when the buffer is too small (<paramref name="needed"/> says how large), or
    /// <see cref="SnapshotOfReleased"/> when the table was released (read the map's table again);
    /// <paramref name="end"/> is the first position after this bucket (0 when it was the last).
    /// </summary>
    /// <remarks>Why split order: a split divides a bucket's range of reversed hashes into its two halves, so ranges
    /// only ever refine; an enumeration that walks positions upward visits each position once however the table
    /// grows under it, and every entry sits at the one fixed position of its hash: never seen twice.</remarks>
    public int SnapshotConcurrent(ulong position, KeyValuePair<TKey, TValue>[] buffer, out ulong end, out int needed)
    {
        ulong hashBits = ReverseBits(position);
        var spin = new SpinWait();
        while (true)
        {
            long state = Volatile.Read(ref _state);
            byte** directory = (byte**)Volatile.Read(ref _directory);
            (long b, int depth) = Addressing(hashBits, state);
            byte* primary = BucketAt(directory, b);
            ref uint sequence = ref *(uint*)(primary + VersionOffset);
            uint seen = Volatile.Read(ref sequence);
            if ((seen & 1) == 0)
            {
                int count = 0;
                needed = 0;
                bool changed = false;
                for (byte* bucket = primary; bucket != null;)
                {
                    uint occupied = Occupied(bucket);
                    needed += BitOperations.PopCount(occupied);
                    while (occupied != 0 && count < buffer.Length)
                    {
                        byte* entry = Entry(bucket, BitOperations.TrailingZeroCount(occupied));
                        occupied &= occupied - 1;
                        TKey key = KeyAt(entry);
                        if (ReverseBits(Hash(key)) >= position) buffer[count++] = new KeyValuePair<TKey, TValue>(key, ReadValue(entry));
                    }
                    bucket = (byte*)Volatile.Read(ref *(nint*)(bucket + NextOffset));
                    if (bucket != null && Volatile.Read(ref sequence) != seen)
                    {
                        changed = true;
                        break;
                    }
                }
                LoadLoadFence();
                // The bucket and its depth both unchanged: a split of this very bucket that ended before the sequence was
                // read keeps the lower half at the same index but deepens it, and the upper half's entries are gone from
                // this chain; with the old depth, `end` would jump over them.
                bool unchanged = !changed && Volatile.Read(ref sequence) == seen;
                // After the sequence's re-read, one load for the bucket's check and, as a lookup's last check (see
                // TryGetConcurrentAttempt), the released flag: nothing read from a released table is kept.
                long after = Volatile.Read(ref _state);
                if (IsReleasedState(after))
                {
                    end = 0;
                    return SnapshotOfReleased;
                }
                if (unchanged && Addressing(hashBits, after) == (b, depth))
                {
                    end = depth == 0 ? 0 : ReverseBits((ulong)b) + (1UL << (64 - depth));
                    return needed > buffer.Length ? -1 : count;
                }
            }
            if (IsReleasedState(Volatile.Read(ref _state)))
            {
                end = 0;
                needed = 0;
                return SnapshotOfReleased;
            }
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    /// <summary>The bucket of <paramref name="hashBits"/> and the number of hash bits that address it (d + 1 for a
    /// bucket below the split pointer or the upper half of a split, d otherwise).</summary>
    private static (long Bucket, int Depth) Addressing(ulong hashBits, long state)
    {
        int d = Depth(state);
        return (BucketIndex(hashBits, state), (long)(hashBits & ((1UL << d) - 1)) < SplitPointer(state) ? d + 1 : d);
    }

    private static ulong ReverseBits(ulong x)
    {
        x = ((x >> 1) & 0x5555555555555555UL) | ((x & 0x5555555555555555UL) << 1);
        x = ((x >> 2) & 0x3333333333333333UL) | ((x & 0x3333333333333333UL) << 2);
        x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FUL) | ((x & 0x0F0F0F0F0F0F0F0FUL) << 4);
        return System.Buffers.Binary.BinaryPrimitives.ReverseEndianness(x);
    }

    // ---- the single-threaded enumerator's walk ----

    /// <summary>
    /// Moves (<paramref name="bucketIndex"/>, <paramref name="bucket"/>, <paramref name="slot"/>) to the next occupied
    /// slot in bucket order; false at the end. Start with bucketIndex -1.
    /// </summary>
    public bool MoveNext(ref long bucketIndex, ref byte* bucket, ref int slot, out byte* entry)
    {
        while (true)
        {
            if (bucket != null)
            {
                uint occupied = slot < 0 ? Occupied(bucket) : Occupied(bucket) & ~((2u << slot) - 1);
                if (occupied != 0)
                {
                    slot = BitOperations.TrailingZeroCount(occupied);
                    entry = Entry(bucket, slot);
                    return true;
                }
                bucket = NextOf(bucket);
                slot = -1;
                if (bucket != null) continue;
            }
            if (bucketIndex + 1 >= BucketCount)
            {
                entry = null;
                return false;
            }
            bucketIndex++;
            bucket = BucketAt((byte**)_directory, bucketIndex);
            slot = -1;
        }
    }
}
