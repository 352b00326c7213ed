using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using Manaloc.Platform;
using Manaloc.Threading;

namespace Manaloc.Collections;

/// <summary>
/// A <see cref="NativeCache"/>'s native memory: a fixed hash index, blocks of 64-byte chunks allocated up to the
/// budget, entries as chains of chunks, the free and retired chunk lists, and the eviction order. Lookups run
/// without a lock; every other member runs under the cache's writer lock.
/// </summary>
/// <remarks>
/// <para>Memory: the directory of block pointers, the index and the sketch are reserved at construction, blocks (4 KiB,
/// 64 KiB or 2 MiB, every byte counted) as entries need them, up to the budget; nothing is freed before <see cref="Free"/>.
/// The index and the sketch are zero-filled mappings committed on first touch (<see cref="AllocateZeroedTable"/>), and
/// the directory is never cleared (a slot is read only once its block is in it), so construction costs mappings, not
/// page faults, and the resident memory follows the entries; the budget counts them whole, reserved. The
/// 2 MiB blocks, and the index and sketch when they are whole 2 MiB units, are <see cref="HugePageBlocks"/>:
/// lookups land at random over the whole budget, and with 4 KiB pages nearly every cache miss of theirs is also a TLB
/// miss. A huge page holds only bytes the budget counts (the blocks and tables are whole units).</para>
/// <para>An entry is a chain of chunks linked by the first 4 bytes of each (a chunk reference is its index + 1; 0 ends
/// the chain): the first chunk holds the header and the start of the key; key then value follow, 60 bytes per
/// chunk. One chunk size means no size class can starve another: any eviction frees chunks every entry can use. Free
/// chunks are kept as runs of consecutive chunks listed by length (<see cref="TakeRun"/>), so an entry is usually one
/// run, which readers prefetch and copy by address, also once the space has been recycled many times.</para>
/// <para>Readers (lock-free, read-copy-update): an entry's chunks are written before a release store links it
/// into its bucket, and never change while it is reachable (but for the sliding expiry, which readers store). Removing an entry unlinks it (release store) and puts it on the retired list, whose chunks go
/// back to the free runs only after <see cref="ReaderGate.WaitForReaders"/>: every read that may have loaded a link
/// to it has ended (see <see cref="ReaderGate"/>'s ordering argument: unlink, process-wide barrier, wait for each
/// reader that was inside). So a reader never sees an entry's chunks reused: it copies the old value whole or the
/// new one whole. The wait is amortised: eviction runs ahead by about 1/512 of the space (at most 256 chunks) and reclaims that batch
/// with one wait, and chunks retired by replacements and removals are reclaimed once <see cref="_eagerReclaimChunks"/>
/// of them wait (see <see cref="MakeRoom"/>).</para>
/// <para>Eviction: W-TinyLFU (see CacheStore.Policy.cs); the policy's queues link through the header, which
/// readers never read.</para>
/// </remarks>
internal sealed unsafe partial class CacheStore
{
    internal const int ChunkBytes = 64;
    internal const int ChunkShift = 6;
    private const int LinkBytes = 4;
    internal const int ChunkPayload = ChunkBytes - LinkBytes;
    // First-chunk header (offset 0 is the chunk link, as in every chunk).
    private const int BucketNextOffset = 4;
    private const int HashOffset = 8;          // the full 64-bit hash: its low bits pick the bucket (eviction finds the link), its high word is compared first
    private const int KeyLengthOffset = 16;
    private const int ValueLengthOffset = 20;
    private const int PolicyPrevOffset = 24;   // also the retired list's link
    private const int PolicyNextOffset = 28;
    private const int ExpiresOffset = 32;      // UTC ticks; Never when the entry does not expire
    private const int AbsoluteOffset = 40;     // the cap of a sliding expiry
    private const int SlidingOffset = 48;      // ticks; 0 when not sliding
    private const int QueueOffset = 56;        // the policy's queue of the entry (writer-only)
    private const int ReferencedOffset = 57;   // 1 once read since the policy last looked (readers set it, the writer clears it)
    private const int ContiguousOffset = 58;   // when the entry's chunks are consecutive in one block (readers prefetch them): its chunk count up to PrefetchChunkLimit; else 0
    internal const int HeaderBytes = 60;
    private const int FirstPayload = ChunkBytes - HeaderBytes; // 4 bytes of the key in the first chunk (KeyEquals compares them as one uint)
    internal const long Never = long.MaxValue;
    private const int PrefetchChunkLimit = 16;
    // Free-run lists: list n (1 to FreeRunClasses - 1) holds runs of exactly n chunks, the last list runs of
    // FreeRunClasses chunks or more. A free run's first chunk holds the next run of its list in its link and its
    // length after it.
    private const int FreeRunClasses = 32;
    private const int FreeRunLengthOffset = 4;

    /// <summary>Tests under Coyote: a scheduling point between the chunks of a copy (Coyote sees no native load or store).</summary>
    private static readonly bool s_interleave = AppContext.TryGetSwitch("Manaloc.Collections.InterleaveNativeAccess", out bool on) && on;
    private static int s_schedulingPoint = 0;

    private readonly nint _directory;
    private readonly int _maxBlocks;
    private readonly int _blockShift;
    private readonly nint _buckets;
    private readonly uint _bucketMask;
    // A chunk reference's block (index >> _chunksPerBlockShift) and place in it (index & _chunkInBlockMask), from the
    // block shift once here: At runs on every lookup, twice or more on a hit, and derived them on each call.
    private readonly int _chunksPerBlockShift;
    private readonly uint _chunkInBlockMask;
    private readonly long _fixedBytes;
    private readonly long _reclaimBatch;
    // Retired chunks reclaimed before the next write however many chunks are free (see MakeRoom): 128 KiB of entries,
    // an eighth of a small cache's space (so a small cache, the concurrency tests', takes this path too).
    private readonly long _eagerReclaimChunks;
    private readonly long _bucketBytes, _sketchBytes;

    // Free chunks as runs of consecutive chunks of one block, listed by length (see TakeRun); W.FreeRunChunks counts them all.
    private readonly uint[] _freeRuns = new uint[FreeRunClasses + 1];
    // The writer's scalars, alone on their lines (see WriterState).
    private Padded<WriterState> _writer;

    /// <summary>The writer's scalars (under the cache's lock; those other threads read are written with Volatile.Write).</summary>
    /// <remarks>Why padded: every lookup loads the store's read-only fields (the directory, the buckets and their mask,
    /// the read rings), and every write and drain stores to these. On lines they share, each store took the line from
    /// every reading core, and each core's next lookup waited for it to come back; alone on their own lines (128 bytes
    /// of padding each side, <see cref="Padded{T}"/>), the read-only fields stay shared in every core's cache.</remarks>
    private struct WriterState
    {
        public long FreeRunChunks;
        public long RetiredChunks;
        public long Count;
        public long EntryChunks;
        public long Samples;
        public int BlockCount;
        public uint FreshNext, FreshEnd;
        public uint RetiredHead;
        public uint Random;
        /// <summary>The oldest graduate of the window not yet judged (marked Unjudged), in probation (0: none).</summary>
        public uint Candidate;
        public bool Freed;
    }

    /// <summary>The writer's scalars, by reference.</summary>
    private ref WriterState W
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ref _writer.Value;
    }

    public CacheStore(in CacheLayout layout)
    {
        _maxBlocks = layout.MaxBlocks;
        _blockShift = layout.BlockShift;
        _chunksPerBlockShift = _blockShift - ChunkShift;
        _chunkInBlockMask = (1u << _chunksPerBlockShift) - 1;
        _bucketMask = (uint)(layout.Buckets - 1);
        _fixedBytes = layout.FixedBytes;
        _reclaimBatch = Math.Clamp(layout.CapacityChunks / 512, 1, 256);
        _eagerReclaimChunks = Math.Clamp(layout.CapacityChunks / 8, _reclaimBatch, 2048);
        _bucketBytes = layout.Buckets * sizeof(uint);
        _sketchBytes = layout.SketchLongs * sizeof(ulong);
        try
        {
            _directory = (nint)NativeMemory.AlignedAlloc((nuint)((long)_maxBlocks * sizeof(nint)), 64);
            _buckets = (nint)AllocateZeroedTable(_bucketBytes);
        }
        catch (OutOfMemoryException)
        {
            if (_directory != 0) NativeMemory.AlignedFree((void*)_directory);
            throw;
        }
        try
        {
            _sketch = (ulong*)AllocateZeroedTable(_sketchBytes);
        }
        catch (OutOfMemoryException)
        {
            NativeMemory.AlignedFree((void*)_directory);
            FreeZeroedTable((void*)_buckets, _bucketBytes);
            throw;
        }
        W.Random = 0x9E3779B9;
        _sketchBlocks = (uint)(layout.SketchLongs / 8);
        _sampleSize = 10 * layout.SketchLongs;
        long capacity = layout.CapacityChunks - _reclaimBatch;
        _windowMax = Math.Max(1, capacity / 100);
        _protectedMax = (capacity - _windowMax) * 8 / 10;
        int stripes = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Clamp(Environment.ProcessorCount, 1, 64));
        _stripeMask = stripes - 1;
        _readRing = GC.AllocateArray<long>(RingPad + stripes * StripeLongs, pinned: true);
        _drained = new long[stripes];
    }

    public long Count => Volatile.Read(ref W.Count);
    public long NativeBytes => _fixedBytes + ((long)Volatile.Read(ref W.BlockCount) << _blockShift);
    public long EntryBytes => Volatile.Read(ref W.EntryChunks) << ChunkShift;

    /// <summary>Chunks an entry of these lengths takes: the header and the key and value bytes, 60 per chunk after the first's 8.</summary>
    public static long ChunksFor(long keyLength, long valueLength)
        => 1 + (Math.Max(0, keyLength + valueLength - FirstPayload) + ChunkPayload - 1) / ChunkPayload;

    // ---- addressing ----

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* At(uint reference)
    {
        uint index = reference - 1;
        return ((byte**)_directory)[index >> _chunksPerBlockShift] + ((long)(index & _chunkInBlockMask) << ChunkShift);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ref uint Link(byte* chunk) => ref *(uint*)chunk;

    /// <summary>Whether the <paramref name="chunks"/> references from <paramref name="first"/> on span more than one block.</summary>
    private bool CrossesBlock(uint first, long chunks)
    {
        int perBlockShift = _blockShift - ChunkShift;
        long start = first - 1;
        return start >> perBlockShift != (start + chunks - 1) >> perBlockShift;
    }

    /// <summary>Whether <paramref name="reference"/> is the first chunk of its block (its predecessor's reference is in another block).</summary>
    private bool StartsBlock(uint reference) => ((reference - 1) & ((1u << (_blockShift - ChunkShift)) - 1)) == 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref uint Bucket(ulong hash) => ref ((uint*)_buckets)[(uint)hash & _bucketMask];

    // ---- lock-free readers (inside the ReaderGate) ----

    /// <summary>Asks for the line of <paramref name="hash"/>'s bucket, so its cache miss overlaps the caller's work before
    /// the lookup. A hint only, callable outside the <see cref="ReaderGate"/>: a prefetch reads nothing and cannot fault,
    /// even on a store freed meanwhile.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void PrefetchBucket(ulong hash)
    {
        if (Sse.IsSupported) Sse.Prefetch0((uint*)_buckets + ((uint)hash & _bucketMask));
    }

    /// <summary>Asks for the lines a <see cref="Set"/> of <paramref name="hash"/> reads at random, its bucket and its
    /// sketch block, so their cache misses overlap the entry's writing instead of each stalling the writer in turn. A
    /// hint only, callable outside the lock: a prefetch reads nothing and cannot fault.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void PrefetchForSet(ulong hash)
    {
        if (!Sse.IsSupported) return;
        Sse.Prefetch0((uint*)_buckets + ((uint)hash & _bucketMask));
        Sse.Prefetch0(SketchBlock(hash));
    }

    /// <summary>The entry of <paramref name="key"/>, or null. Lock-free: links are loaded with acquire, so the
    /// entry's chunks, written before the release store that linked it, are seen whole.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte* Find(ReadOnlySpan<byte> key, ulong hash, out uint reference)
    {
        reference = Volatile.Read(ref Bucket(hash));
        while (reference != 0)
        {
            byte* entry = At(reference);
            PrefetchKeyChunks(entry);
            if (*(ulong*)(entry + HashOffset) == hash && *(int*)(entry + KeyLengthOffset) == key.Length)
            {
                int contiguousChunks = *(entry + ContiguousOffset);
                if (contiguousChunks > 3) PrefetchChunks(entry, contiguousChunks);
                if (KeyEquals(entry, key, contiguousChunks)) return entry;
            }
            reference = Volatile.Read(ref *(uint*)(entry + BucketNextOffset));
        }
        return null;
    }

    /// <summary>Asks for the two lines after the entry's first with the first, before its header is read: the key
    /// continues in the second chunk and the value starts there, so when the entry is contiguous (the usual case: an
    /// entry is written into consecutive free chunks) the key compare and the copy find them on the way instead of
    /// waiting for a third dependent miss after the header's. A hint only: prefetching reads nothing and cannot fault,
    /// so the lines of a chained entry (or past a block's end) cost a wasted fetch at most.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void PrefetchKeyChunks(byte* entry)
    {
        if (!Sse.IsSupported) return;
        Sse.Prefetch0(entry + ChunkBytes);
        Sse.Prefetch0(entry + 2 * ChunkBytes);
    }

    /// <summary>Asks for the lines of a contiguous entry's chunks after the first at once, so their cache misses overlap
    /// instead of each waiting for the link loaded from the chunk before (the key compare and the copy follow the links).
    /// A hint only: it reads nothing and cannot fault; the chunks are the entry's own (set before the release store that
    /// linked it, and not reused while this reader is inside the gate).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void PrefetchChunks(byte* entry, int chunks)
    {
        if (!Sse.IsSupported) return;
        // At most the first PrefetchChunkLimit chunks (the writer caps the count it marks): past them a long copy streams,
        // which the hardware prefetcher follows.
        long end = (long)chunks << ChunkShift;
        // The second and third lines were asked for with the first (PrefetchKeyChunks).
        for (long offset = 3 * ChunkBytes; offset < end; offset += ChunkBytes) Sse.Prefetch0(entry + offset);
    }

    /// <summary>Whether the entry's key is <paramref name="key"/> (its length already compared equal).</summary>
    /// <remarks>The first chunk's 4 key bytes are one 32-bit compare when the key has them (a span compare there dispatched
    /// on the length first). A contiguous entry's (<paramref name="contiguousChunks"/>, its mark, not 0) next chunk is the next 64 bytes: no link to load and
    /// no directory lookup, and a key of up to 64 bytes ends in the second chunk's payload, compared in one piece
    /// (<see cref="PayloadEquals"/>); sound as in <see cref="CopyValue"/> (the mark and the chunks never change while the entry is
    /// reachable, and its chunks are not reused while this reader is inside the gate).</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool KeyEquals(byte* entry, ReadOnlySpan<byte> key, int contiguousChunks)
    {
        if (key.Length >= FirstPayload)
        {
            if (*(uint*)(entry + HeaderBytes) != Unsafe.ReadUnaligned<uint>(ref MemoryMarshal.GetReference(key))) return false;
            key = key[FirstPayload..];
        }
        else
        {
            return new ReadOnlySpan<byte>(entry + HeaderBytes, key.Length).SequenceEqual(key);
        }
        // The usual key (up to 64 bytes) of a contiguous entry continues in the second chunk's payload, all of it.
        if (contiguousChunks != 0 && key.Length <= ChunkPayload) return PayloadEquals(entry + ChunkBytes + LinkBytes, key);
        return ChunksEqual(entry, key, contiguousChunks != 0);
    }

    /// <summary>The rest of <see cref="KeyEquals"/> for a longer key or a chained entry: <paramref name="key"/> (after the
    /// first chunk's 4 bytes) compared chunk by chunk.</summary>
    /// <remarks>Not inlined: the loop kept a register and a stack slot of the inlined hit busy for the keys that do not
    /// take it.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool ChunksEqual(byte* entry, ReadOnlySpan<byte> key, bool contiguous)
    {
        byte* chunk = entry;
        while (!key.IsEmpty)
        {
            chunk = contiguous ? chunk + ChunkBytes : At(Link(chunk));
            int n = Math.Min(key.Length, ChunkPayload);
            if (!new ReadOnlySpan<byte>(chunk + LinkBytes, n).SequenceEqual(key[..n])) return false;
            key = key[n..];
        }
        return true;
    }

    /// <summary>Whether the <paramref name="key"/>.Length bytes at <paramref name="stored"/> (at most a chunk's payload,
    /// 60) are <paramref name="key"/>.</summary>
    /// <remarks>Why not <c>SequenceEqual</c>: its dispatch on the length (eight checks and branches before the compare,
    /// written for any length) was most of a hit's key compare. Here a length from 16 is two blocks of 16 or 32 bytes, the
    /// second ending at the last byte (they overlap when the length is not twice the block), compared at once; from 4, two
    /// words the same way. Each load stays within the key's bytes on both sides: nothing outside either span is read. The
    /// stored side is read with <c>Unsafe.ReadUnaligned</c>, not <c>Vector128.Load</c>: Coyote 1.7's rewriter cannot import
    /// a generic method with a <c>T*</c> parameter (the same unaligned load).</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool PayloadEquals(byte* stored, ReadOnlySpan<byte> key)
    {
        ref byte k = ref MemoryMarshal.GetReference(key);
        nuint n = (nuint)key.Length;
        if (n >= 16)
        {
            if (n <= 32)
            {
                return ((Unsafe.ReadUnaligned<Vector128<byte>>(stored) ^ Vector128.LoadUnsafe(ref k))
                    | (Unsafe.ReadUnaligned<Vector128<byte>>(stored + n - 16) ^ Vector128.LoadUnsafe(ref k, n - 16))) == Vector128<byte>.Zero;
            }
            if (Vector256.IsHardwareAccelerated)
            {
                return ((Unsafe.ReadUnaligned<Vector256<byte>>(stored) ^ Vector256.LoadUnsafe(ref k))
                    | (Unsafe.ReadUnaligned<Vector256<byte>>(stored + n - 32) ^ Vector256.LoadUnsafe(ref k, n - 32))) == Vector256<byte>.Zero;
            }
            return new ReadOnlySpan<byte>(stored, key.Length).SequenceEqual(key);
        }
        if (n >= 8)
        {
            return ((Unsafe.ReadUnaligned<ulong>(stored) ^ Unsafe.ReadUnaligned<ulong>(ref k))
                | (Unsafe.ReadUnaligned<ulong>(stored + n - 8) ^ Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref k, n - 8)))) == 0;
        }
        if (n >= 4)
        {
            return ((Unsafe.ReadUnaligned<uint>(stored) ^ Unsafe.ReadUnaligned<uint>(ref k))
                | (Unsafe.ReadUnaligned<uint>(stored + n - 4) ^ Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref k, n - 4)))) == 0;
        }
        return new ReadOnlySpan<byte>(stored, key.Length).SequenceEqual(key);
    }

    public static int ValueLength(byte* entry) => *(int*)(entry + ValueLengthOffset);

    /// <summary>Whether the entry is marked contiguous (its chunks prefetched on a read); see <see cref="ChunksAreConsecutive"/>.</summary>
    internal static bool IsMarkedContiguous(byte* entry) => *(entry + ContiguousOffset) != 0;

    /// <summary>The chunks a reader prefetches for the entry as its mark says (0 for an entry not contiguous), for tests.</summary>
    internal static int MarkedPrefetchChunks(byte* entry) => *(entry + ContiguousOffset);

    /// <summary>The most chunks a mark counts (a reader prefetches no more).</summary>
    internal const int MarkedChunkLimit = PrefetchChunkLimit;

    /// <summary>Whether each of the entry's chunks follows the one before in memory, by its links (for tests of the mark).</summary>
    internal bool ChunksAreConsecutive(byte* entry)
    {
        for (byte* chunk = entry; Link(chunk) != 0; chunk += ChunkBytes)
        {
            if (At(Link(chunk)) != chunk + ChunkBytes) return false;
        }
        return true;
    }

    /// <summary>The free chunks counted by walking the free-run lists (for tests: it must equal the count kept); throws
    /// if a run is on the wrong list or crosses the end of its block.</summary>
    internal long CountFreeRunChunks()
    {
        long total = 0;
        long chunksPerBlock = 1L << (_blockShift - ChunkShift);
        for (int list = 1; list <= FreeRunClasses; list++)
        {
            for (uint run = _freeRuns[list]; run != 0; run = Link(At(run)))
            {
                long length = *(int*)(At(run) + FreeRunLengthOffset);
                if (length < 1 || Math.Min(length, FreeRunClasses) != list) throw new InvalidOperationException($"A free run of {length} chunks is on list {list}.");
                if ((run - 1) % chunksPerBlock + length > chunksPerBlock) throw new InvalidOperationException($"The free run at {run} of {length} chunks crosses its block's end.");
                total += length;
            }
        }
        return total;
    }

    /// <summary>For tests of <see cref="WriterState"/>'s padding: the distance in bytes from the writer's scalars to the
    /// nearest of the fields every lookup (or a <see cref="NativeBytes"/> read) loads, which must be at least 128.</summary>
    internal long ReaderFieldsDistanceFromWriterState()
    {
        ref byte start = ref Unsafe.As<WriterState, byte>(ref W);
        long size = Unsafe.SizeOf<WriterState>();
        long nearest = long.MaxValue;
        foreach (long offset in (ReadOnlySpan<long>)[
            Unsafe.ByteOffset(ref start, ref Unsafe.As<nint, byte>(ref Unsafe.AsRef(in _directory))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<nint, byte>(ref Unsafe.AsRef(in _buckets))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<uint, byte>(ref Unsafe.AsRef(in _bucketMask))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<int, byte>(ref Unsafe.AsRef(in _chunksPerBlockShift))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<uint, byte>(ref Unsafe.AsRef(in _chunkInBlockMask))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<int, byte>(ref Unsafe.AsRef(in _blockShift))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<int, byte>(ref Unsafe.AsRef(in _stripeMask))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<long[], byte>(ref Unsafe.AsRef(in _readRing))),
            Unsafe.ByteOffset(ref start, ref Unsafe.As<long, byte>(ref Unsafe.AsRef(in _fixedBytes))),
        ])
        {
            // A field before the scalars ends at most 8 bytes after its offset; one after them starts at its offset.
            long distance = offset < 0 ? -offset - 8 : offset - size;
            nearest = Math.Min(nearest, distance);
        }
        return nearest;
    }

    /// <summary>For tests of the read rings' padding: each stripe's cursor and slots (written by its thread on every read) as
    /// (byte offset in the ring array's elements, bytes written), and the array's length in bytes.</summary>
    internal ((long Offset, long Bytes)[] Stripes, long ArrayBytes) ReadRingLayout()
    {
        int stripes = _stripeMask + 1;
        var ranges = new (long, long)[stripes];
        ref byte elements = ref Unsafe.As<long, byte>(ref MemoryMarshal.GetArrayDataReference(_readRing));
        for (int stripe = 0; stripe < stripes; stripe++)
        {
            ranges[stripe] = ((long)Unsafe.ByteOffset(ref elements, ref Unsafe.As<long, byte>(ref ReadCursor(stripe))), (SlotsOffset + ReadStripeSlots) * sizeof(long));
        }
        return (ranges, (long)_readRing.Length * sizeof(long));
    }

    /// <summary>Retired chunks waiting for <see cref="Reclaim"/> (for tests).</summary>
    internal long RetiredChunks => W.RetiredChunks;

    /// <summary>Retired chunks past which the next write reclaims them (for tests; see <see cref="MakeRoom"/>).</summary>
    internal long EagerReclaimThreshold => _eagerReclaimChunks;

    /// <summary>Free chunks as counted (the free runs, not the fresh chunks of the current block).</summary>
    internal long FreeRunChunksCounted => W.FreeRunChunks;

    /// <summary>Whether the entry has expired at <paramref name="now"/> (UTC ticks).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsExpired(byte* entry, long now) => Volatile.Read(ref *(long*)(entry + ExpiresOffset)) <= now;

    /// <summary>The entry's expiry (UTC ticks; <see cref="Never"/> if it does not expire), loaded once: a read tests
    /// "may expire" and "has expired" on the one value instead of loading the field for each.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static long Expires(byte* entry) => Volatile.Read(ref *(long*)(entry + ExpiresOffset));

    /// <summary>A read's bookkeeping: the access recorded for the policy (see <see cref="RecordAccess"/>), and a sliding
    /// entry's expiry moved to now + sliding (capped by its absolute expiry): a plain store, also harmless on an entry
    /// just retired (its memory is not reused while the reader is inside the gate); two readers racing store nearly the
    /// same instant. Returns true when the read buffer wants draining. <paramref name="stripe"/> is the reading thread's
    /// (<see cref="ReadTally.Stripe"/>, any int: masked to the stripes).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Touch(byte* entry, TimeProvider? clock, int stripe)
    {
        bool drain = RecordAccess(entry, stripe);
        long sliding = *(long*)(entry + SlidingOffset);
        if (sliding != 0 && clock is not null) Slide(entry, sliding, clock);
        return drain;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Slide(byte* entry, long sliding, TimeProvider clock)
    {
        long now = clock.GetUtcNow().UtcTicks;
        long absolute = *(long*)(entry + AbsoluteOffset);
        Volatile.Write(ref *(long*)(entry + ExpiresOffset), now > absolute - sliding ? absolute : now + sliding);
    }

    /// <summary>Copies the value into <paramref name="destination"/> (at least <see cref="ValueLength"/> bytes).</summary>
    /// <remarks>Not inlined: it is long, and inlined into the lookup it takes the JIT's inlining budget from the small
    /// helpers of the hit path (the access record, the hit count), which then become calls.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public void CopyValue(byte* entry, Span<byte> destination)
    {
        int keyLength = *(int*)(entry + KeyLengthOffset);
        int remaining = *(int*)(entry + ValueLengthOffset);
        if (remaining == 0) return; // the key may end the chain: no chunk after it to skip to
        // Skip the key: it starts in the first chunk's payload.
        byte* chunk = entry;
        int offset = HeaderBytes + keyLength;
        while (offset >= ChunkBytes)
        {
            chunk = At(Link(chunk));
            offset -= ChunkPayload;
        }
        int written = 0;
        if (*(entry + ContiguousOffset) != 0 && (uint)remaining <= (uint)destination.Length)
        {
            // A contiguous entry's next chunk is the next 64 bytes (no link to load, no directory lookup), and each whole
            // chunk's payload is copied as one fixed-size block (unrolled vector moves instead of a memmove call per chunk).
            // Sound for a reader as the linked walk is: the mark and the chunks were written before the release store that
            // linked the entry and never change while it is reachable, and its chunks are not reused while this reader is
            // inside the gate (Reclaim), so entry + 64 * i is the chain's i-th chunk throughout the copy.
            int first = Math.Min(remaining, ChunkBytes - offset);
            new ReadOnlySpan<byte>(chunk + offset, first).CopyTo(destination);
            written = first;
            remaining -= first;
            ref byte target = ref MemoryMarshal.GetReference(destination);
            while (remaining >= ChunkPayload)
            {
                if (s_interleave) Volatile.Read(ref s_schedulingPoint);
                chunk += ChunkBytes;
                Unsafe.CopyBlockUnaligned(ref Unsafe.Add(ref target, written), ref *(chunk + LinkBytes), ChunkPayload);
                written += ChunkPayload;
                remaining -= ChunkPayload;
            }
            if (remaining == 0) return;
            if (s_interleave) Volatile.Read(ref s_schedulingPoint);
            chunk += ChunkBytes;
            new ReadOnlySpan<byte>(chunk + LinkBytes, remaining).CopyTo(destination[written..]);
            return;
        }
        while (true)
        {
            int n = Math.Min(remaining, ChunkBytes - offset);
            new ReadOnlySpan<byte>(chunk + offset, n).CopyTo(destination.Slice(written, n));
            written += n;
            remaining -= n;
            if (remaining == 0) return;
            if (s_interleave) Volatile.Read(ref s_schedulingPoint);
            chunk = At(Link(chunk));
            offset = LinkBytes;
        }
    }

    // ---- the writer's side (under the cache's lock) ----

    /// <summary>The entry of <paramref name="key"/> and the link that points to it, or null.</summary>
    private byte* FindForWrite(ReadOnlySpan<byte> key, ulong hash, out uint* link)
    {
        link = (uint*)_buckets + ((uint)hash & _bucketMask);
        uint reference = *link;
        while (reference != 0)
        {
            byte* entry = At(reference);
            if (*(ulong*)(entry + HashOffset) == hash && *(int*)(entry + KeyLengthOffset) == key.Length && KeyEquals(entry, key, *(entry + ContiguousOffset))) return entry;
            link = (uint*)(entry + BucketNextOffset);
            reference = *link;
        }
        return null;
    }

    // ---- a write's prefetches (under the lock; hints only: a prefetch reads nothing and cannot fault) ----
    // A Set replacing a value touches some ten lines at random: the old entry's header, its two queue neighbours (Unqueue
    // stores into their headers), the window's least recent entry and its neighbour (the window's overflow graduates to
    // probation), the free run the chunks come from, and the new entry's chunks. Loaded in program order each was a cache
    // miss of its own; the stores to the neighbours came last, so the lock's release (a locked instruction, which waits
    // for every store before it) waited for their misses too. Asked for early, the misses overlap each other and the
    // entry's writing. Each prefetch is of a line the write then reads or stores (a reference read under the lock from a
    // live entry's header, a queue's end or a free list's head), so a wrong guess costs one wasted fetch.

    /// <summary>Asks for the lines a write reads first: the first two of the first entry of <paramref name="hash"/>'s bucket
    /// (usually the key's old entry: chains are short; its header and key), the header of the window's least recent entry
    /// (when this entry will push the window over its share) and the free run <see cref="TakeRun"/> will take. The
    /// bucket's line was asked for before the lock (<see cref="PrefetchForSet"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void PrefetchForWrite(long chunks, ulong hash)
    {
        if (!Sse.IsSupported) return;
        uint head = Bucket(hash);
        if (head != 0)
        {
            byte* entry = At(head);
            Sse.Prefetch0(entry);
            Sse.Prefetch0(entry + ChunkBytes);
        }
        uint windowTail = _queueTail[Window];
        if (windowTail != 0 && _queueWeight[Window] + chunks > _windowMax) Sse.Prefetch0(At(windowTail));
        for (int list = (int)Math.Min(chunks, FreeRunClasses); list <= FreeRunClasses; list++)
        {
            uint run = _freeRuns[list];
            if (run == 0) continue;
            Sse.Prefetch0(At(run));
            break;
        }
    }

    /// <summary>Asks for the headers of <paramref name="entry"/>'s queue neighbours, which <see cref="Unqueue"/> stores to.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void PrefetchQueueNeighbours(byte* entry)
    {
        if (!Sse.IsSupported) return;
        uint prev = *(uint*)(entry + PolicyPrevOffset), next = *(uint*)(entry + PolicyNextOffset);
        if (prev != 0) Sse.Prefetch0(At(prev));
        if (next != 0) Sse.Prefetch0(At(next));
    }

    /// <summary>When an entry of <paramref name="chunks"/> chunks will push the window over its share, asks for the header
    /// of the window's least recent entry's neighbour: graduating the least recent entry stores to it (<see cref="Unqueue"/>),
    /// and it is the next to be looked at. Called after the header of the least recent entry was asked for
    /// (<see cref="PrefetchForWrite"/>) and the key looked up, so that header is usually in by then.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void PrefetchWindowTailNeighbour(long chunks)
    {
        if (!Sse.IsSupported) return;
        uint windowTail = _queueTail[Window];
        if (windowTail == 0 || _queueWeight[Window] + chunks <= _windowMax) return;
        uint prev = *(uint*)(At(windowTail) + PolicyPrevOffset);
        if (prev != 0) Sse.Prefetch0(At(prev));
    }

    /// <summary>Asks for the lines of the run of <paramref name="length"/> chunks from <paramref name="first"/> after its
    /// first (written at once), up to <see cref="PrefetchChunkLimit"/>: recycled chunks are cold, and their misses overlap
    /// instead of queueing behind the stores of the chunks before.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void PrefetchRun(byte* first, long length)
    {
        if (!Sse.IsSupported) return;
        long end = Math.Min(length, PrefetchChunkLimit) << ChunkShift;
        for (long offset = ChunkBytes; offset < end; offset += ChunkBytes) Sse.Prefetch0(first + offset);
    }

    /// <summary>Makes room for <paramref name="chunks"/> chunks: a new block while the budget allows, otherwise evicts
    /// (W-TinyLFU) until enough retired chunks can be reclaimed in one wait for readers. Eviction judges expiry at
    /// <paramref name="now"/>, read from <paramref name="clock"/> before the first eviction when it is <see cref="ClockNotRead"/>.</summary>
    /// <exception cref="OutOfMemoryException">The system refused a block; nothing was changed but evictions.</exception>
    private void MakeRoom(long chunks, long now, TimeProvider? clock, ref CacheCounters counters)
    {
        // Replacements and removals retire chunks without any eviction; left until the free chunks ran out, they piled up
        // (millions in a cache with room to spare, reclaimed in one long pause) and each retired header was a cold miss by
        // the time Reclaim read it. Reclaimed at _eagerReclaimChunks, the headers are still in the core's cache, the chunks
        // are reused while warm, and one wait for readers serves some 300 entries of the lab's mean size. Eviction is
        // unchanged: it runs only while the free and retired chunks together are short, which reclaiming does not change.
        if (W.RetiredChunks >= _eagerReclaimChunks) Reclaim();
        while (FreeChunks < chunks)
        {
            if (W.BlockCount < _maxBlocks)
            {
                AddBlock();
                continue;
            }
            if (IsEmpty || FreeChunks + W.RetiredChunks >= chunks + _reclaimBatch)
            {
                Reclaim();
                if (FreeChunks < chunks && IsEmpty) throw new InvalidOperationException("The cache's space is smaller than one entry it accepted: an internal error.");
                continue;
            }
            if (now == ClockNotRead) now = clock is not null ? clock.GetUtcNow().UtcTicks : throw new InvalidOperationException("A write that evicts needs the time or a clock: an internal error.");
            EvictOne(now, ref counters);
        }
    }

    /// <summary>A write's <c>now</c> when the caller has not read its clock: a write that neither expires nor evicts needs no
    /// time, and the clock is a call into the system (a tenth of a write to a cache with room, by profile).</summary>
    public const long ClockNotRead = long.MinValue;

    /// <summary>Whether every block the budget allows is allocated, so writes evict (read outside the lock: a hint; a write
    /// that evicts reads the clock itself if its caller did not).</summary>
    public bool AtBudget => Volatile.Read(ref W.BlockCount) >= _maxBlocks;

    private long FreeChunks => W.FreeRunChunks + (W.FreshEnd - W.FreshNext);

    /// <summary>A zero-filled table of the index or the policy, committed lazily where the system allows: its pages are
    /// faulted in (zeroed by the kernel) on first touch, so construction costs a mapping and the resident memory follows the
    /// entries. Whole 2 MiB units (a large budget's) go on huge pages; whole base pages on a private mapping; a small
    /// budget's table (under a page) is allocated and cleared, which touches at most a page. 64-byte aligned.</summary>
    /// <exception cref="OutOfMemoryException">The system refused the memory.</exception>
    private static void* AllocateZeroedTable(long bytes)
    {
        if (HugePageBlocks.IsWholeGranules(bytes)) return HugePageBlocks.Allocate(bytes);
        if (IsWholePages(bytes))
        {
            byte* table = PageBlocks.TryAllocate(bytes);
            return table != null ? table : throw new OutOfMemoryException();
        }
        void* small = NativeMemory.AlignedAlloc((nuint)bytes, ChunkBytes);
        NativeMemory.Clear(small, (nuint)bytes);
        return small;
    }

    /// <summary>Frees a table <see cref="AllocateZeroedTable"/> returned for <paramref name="bytes"/> (null: nothing).</summary>
    private static void FreeZeroedTable(void* table, long bytes)
    {
        if (table == null) return;
        if (HugePageBlocks.IsWholeGranules(bytes)) HugePageBlocks.Free((byte*)table, bytes);
        else if (IsWholePages(bytes)) PageBlocks.Free((byte*)table, bytes);
        else NativeMemory.AlignedFree(table);
    }

    private static bool IsWholePages(long bytes) => bytes >= Environment.SystemPageSize && bytes % Environment.SystemPageSize == 0;

    /// <summary>A block of chunks (not cleared: every chunk is written before it is linked): on huge pages when it is
    /// 2 MiB (a large budget's), 64-byte aligned otherwise.</summary>
    private static void* AllocateBlock(long bytes)
        => HugePageBlocks.IsWholeGranules(bytes) ? HugePageBlocks.Allocate(bytes) : NativeMemory.AlignedAlloc((nuint)bytes, ChunkBytes);

    /// <summary>Frees a block <see cref="AllocateBlock"/> returned for <paramref name="bytes"/>.</summary>
    private static void FreeBlock(void* block, long bytes)
    {
        if (HugePageBlocks.IsWholeGranules(bytes)) HugePageBlocks.Free((byte*)block, bytes);
        else NativeMemory.AlignedFree(block);
    }

    private void AddBlock()
    {
        byte* block = (byte*)AllocateBlock(1L << _blockShift);
        // The previous block's chunks not yet handed out go to the free runs, as one run.
        if (W.FreshNext < W.FreshEnd)
        {
            PushRun(W.FreshNext, W.FreshEnd - W.FreshNext);
            W.FreeRunChunks += W.FreshEnd - W.FreshNext;
            W.FreshNext = W.FreshEnd;
        }
        // Written before any chunk of the block is linked into the index (release), so a reader that reaches a chunk sees it.
        ((byte**)_directory)[W.BlockCount] = block;
        uint first = (uint)(((long)W.BlockCount << (_blockShift - ChunkShift)) + 1);
        W.FreshNext = first;
        W.FreshEnd = first + (1u << (_blockShift - ChunkShift));
        Volatile.Write(ref W.BlockCount, W.BlockCount + 1);
        if (!_countsFrequency && 2L * W.BlockCount >= _maxBlocks) Volatile.Write(ref _countsFrequency, true);
    }

    /// <summary>Puts a run of <paramref name="length"/> consecutive free chunks of one block on its list.</summary>
    private void PushRun(uint first, long length)
    {
        int list = (int)Math.Min(length, FreeRunClasses);
        byte* chunk = At(first);
        Link(chunk) = _freeRuns[list];
        *(int*)(chunk + FreeRunLengthOffset) = (int)length;
        _freeRuns[list] = first;
    }

    /// <summary>Takes a run of consecutive chunks for an entry of <paramref name="wanted"/> chunks (the caller made room):
    /// the shortest free run that holds it whole (its rest goes back as a shorter run), else fresh chunks of the current
    /// block, else the longest run there is (the entry then continues in another run). Returns the run's first chunk and
    /// sets <paramref name="length"/> (at most <paramref name="wanted"/>).</summary>
    /// <remarks>Why runs: an entry in consecutive chunks is read by address, its lines prefetched at once; an entry
    /// chained across scattered chunks makes a reader wait for each chunk's link before it can load the next (a
    /// dependent cache miss per 60 bytes). A single free list of chunks mixed the retired entries' chunks, so once
    /// evictions and replacements had recycled the space nearly every entry was chained. Runs keep an evicted entry's
    /// chunks together, and an entry of the same size (the usual case: what is evicted looks like what is written)
    /// takes them whole.</remarks>
    private uint TakeRun(long wanted, out long length)
    {
        for (int list = (int)Math.Min(wanted, FreeRunClasses); list <= FreeRunClasses; list++)
        {
            uint run = _freeRuns[list];
            if (run == 0) continue;
            byte* chunk = At(run);
            long runLength = *(int*)(chunk + FreeRunLengthOffset);
            // The last list's runs are of any length from FreeRunClasses: its head may be too short.
            if (runLength < wanted) continue;
            _freeRuns[list] = Link(chunk);
            if (runLength > wanted) PushRun(run + (uint)wanted, runLength - wanted);
            W.FreeRunChunks -= wanted;
            length = wanted;
            return run;
        }
        long fresh = W.FreshEnd - W.FreshNext;
        if (fresh >= wanted || (fresh > 0 && W.FreeRunChunks == 0))
        {
            length = Math.Min(wanted, fresh);
            uint first = W.FreshNext;
            W.FreshNext += (uint)length;
            return first;
        }
        for (int list = FreeRunClasses; list > 0; list--)
        {
            uint run = _freeRuns[list];
            if (run == 0) continue;
            byte* chunk = At(run);
            long runLength = *(int*)(chunk + FreeRunLengthOffset);
            _freeRuns[list] = Link(chunk);
            length = Math.Min(runLength, wanted);
            if (runLength > length) PushRun(run + (uint)length, runLength - length);
            W.FreeRunChunks -= length;
            return run;
        }
        throw new InvalidOperationException("The cache's free chunks are fewer than it counted: an internal error.");
    }

    /// <summary>Waits until no reader can hold a retired entry, then gives its chunks to the free list.</summary>
    private void Reclaim()
    {
        if (W.RetiredHead == 0) return;
        ReaderGate.WaitForReaders();
        for (uint entry = W.RetiredHead; entry != 0;)
        {
            byte* header = At(entry);
            uint next = *(uint*)(header + PolicyPrevOffset);
            // An entry marked contiguous whose references stay in its first chunk's block is one run, known from its
            // header alone: the walk below would load a link from every chunk (each line cold by now) to find the same run.
            // Consecutive in memory and within one block means consecutive references (a block's chunks are consecutive
            // in both); an entry that crossed into an adjacent block in memory fails the reference check and is walked.
            if (*(header + ContiguousOffset) != 0)
            {
                long chunks = Weight(header);
                if (!CrossesBlock(entry, chunks))
                {
                    PushRun(entry, chunks);
                    entry = next;
                    continue;
                }
            }
            // The chain cut into its runs of consecutive chunks (an entry taken from one run is one run again).
            uint runFirst = entry, reference = entry;
            while (true)
            {
                uint link = Link(At(reference));
                if (link == reference + 1 && !StartsBlock(link))
                {
                    reference = link;
                    continue;
                }
                PushRun(runFirst, reference - runFirst + 1);
                if (link == 0) break;
                runFirst = reference = link;
            }
            entry = next;
        }
        W.FreeRunChunks += W.RetiredChunks;
        W.RetiredHead = 0;
        W.RetiredChunks = 0;
    }

    /// <summary>Adds or replaces the entry of <paramref name="key"/>; the value is <paramref name="value"/> or, when it is
    /// empty and <paramref name="sequence"/> is not, the sequence's segments. <paramref name="now"/> is the time eviction
    /// judges expiry by, or <see cref="ClockNotRead"/>: then <paramref name="clock"/> is read if and when the write evicts.</summary>
    public void Set(ReadOnlySpan<byte> key, ulong hash, ReadOnlySpan<byte> value, in System.Buffers.ReadOnlySequence<byte> sequence, int valueLength,
        long expires, long absolute, long sliding, long now, ref CacheCounters counters, TimeProvider? clock = null)
    {
        long chunks = ChunksFor(key.Length, valueLength);
        // Before anything changes: room (it may evict the old entry of this key; then this is an add).
        MakeRoom(chunks, now, clock, ref counters);
        // The lines this write reads or stores at random are asked for before the entry is written, so their cache misses
        // overlap each other and the writing instead of each stalling the writer in turn (see PrefetchForWrite).
        PrefetchForWrite(chunks, hash);
        // Take the chunks, in as few runs as the free space allows (their lines asked for: recycled chunks are cold).
        uint first = TakeRun(chunks, out long runLength);
        byte* entry = At(first);
        PrefetchRun(entry, runLength);
        // The old entry is found before the new one is written, and its queue neighbours asked for as soon as its header
        // is in, so their misses overlap the writing: nothing from here to the link's store changes the index (taking and
        // writing chunks touches free chunks only, under the lock), so the link found stays the one to store to.
        byte* old = FindForWrite(key, hash, out uint* link);
        uint oldReference = *link;
        if (old != null) PrefetchQueueNeighbours(old);
        PrefetchWindowTailNeighbour(chunks);
        // Link the chunks; write the header and the bytes.
        byte* chunk = entry;
        bool contiguous = true;
        uint reference = first;
        long left = chunks;
        while (true)
        {
            for (long i = 1; i < runLength; i++)
            {
                Link(chunk) = reference + 1;
                reference++;
                chunk += ChunkBytes;
            }
            left -= runLength;
            if (left == 0) break;
            uint next = TakeRun(left, out runLength);
            Link(chunk) = next;
            byte* nextChunk = At(next);
            contiguous &= nextChunk == chunk + ChunkBytes;
            chunk = nextChunk;
            reference = next;
        }
        Link(chunk) = 0;
        // Before the release store that links the entry, like the rest of the header; never changed while it is reachable.
        // The count, not a flag: a reader prefetches that many chunks with no division to work it out.
        *(entry + ContiguousOffset) = contiguous ? (byte)Math.Min(chunks, PrefetchChunkLimit) : (byte)0;
        *(ulong*)(entry + HashOffset) = hash;
        *(int*)(entry + KeyLengthOffset) = key.Length;
        *(int*)(entry + ValueLengthOffset) = valueLength;
        *(long*)(entry + ExpiresOffset) = expires;
        *(long*)(entry + AbsoluteOffset) = absolute;
        *(long*)(entry + SlidingOffset) = sliding;
        *(entry + ReferencedOffset) = 0; // before the release store that links the entry (see RecordAccess)
        var writer = new ChunkWriter(this, entry, contiguous);
        writer.Write(key);
        if (!value.IsEmpty || sequence.IsEmpty) writer.Write(value);
        else foreach (var segment in sequence) writer.Write(segment.Span);

        *(uint*)(entry + BucketNextOffset) = old != null ? *(uint*)(old + BucketNextOffset) : oldReference;
        // Release: the entry's chunks are written before a reader can load the link to it; a reader sees the old
        // entry (whole: retired, not reused while it reads) or the new one.
        Volatile.Write(ref *link, first);
        OnAdded(first, entry, chunks);
        Volatile.Write(ref W.EntryChunks, W.EntryChunks + chunks);
        if (old != null)
        {
            Unqueue(oldReference, old);
            Retire(old, oldReference);
        }
        else
        {
            Volatile.Write(ref W.Count, W.Count + 1);
        }
    }

    /// <summary>Removes the entry of <paramref name="key"/>; returns its entry's expiry state: 1 removed live, 2 removed
    /// expired, 0 absent.</summary>
    public int Remove(ReadOnlySpan<byte> key, ulong hash, long now)
    {
        byte* entry = FindForWrite(key, hash, out uint* link);
        if (entry == null) return 0;
        uint reference = *link;
        bool expired = IsExpired(entry, now);
        Unlink(link, entry);
        Unqueue(reference, entry);
        Retire(entry, reference);
        Volatile.Write(ref W.Count, W.Count - 1);
        return expired ? 2 : 1;
    }

    private void Unlink(uint* link, byte* entry)
        // Release: a reader that loads the successor sees it whole (it was linked with a release store before).
        => Volatile.Write(ref *link, *(uint*)(entry + BucketNextOffset));

    /// <summary>Puts an unlinked, unqueued entry on the retired list (its chunks wait for <see cref="Reclaim"/>).</summary>
    private void Retire(byte* entry, uint reference)
    {
        long chunks = ChunksFor(*(int*)(entry + KeyLengthOffset), *(int*)(entry + ValueLengthOffset));
        // The retired list links through PolicyPrev: readers never read the policy fields, and the chunk links
        // (which a reader still copying this entry follows) stay as they are until Reclaim.
        *(uint*)(entry + PolicyPrevOffset) = W.RetiredHead;
        W.RetiredHead = reference;
        W.RetiredChunks += chunks;
        Volatile.Write(ref W.EntryChunks, W.EntryChunks - chunks);
    }

    /// <summary>Unlinks, unqueues and retires an entry found from the queue (its bucket found by its key's hash).</summary>
    private void RemoveEntry(uint reference, byte* entry)
    {
        uint* link = BucketLinkOf(reference, entry);
        Unlink(link, entry);
        Unqueue(reference, entry);
        Retire(entry, reference);
        Volatile.Write(ref W.Count, W.Count - 1);
    }

    private uint* BucketLinkOf(uint reference, byte* entry)
    {
        uint* link = (uint*)_buckets + ((uint)*(ulong*)(entry + HashOffset) & _bucketMask);
        while (*link != reference) link = (uint*)(At(*link) + BucketNextOffset);
        return link;
    }

    /// <summary>Gives every chunk and the index back to the system (the caller waited for readers).</summary>
    public void Free()
    {
        if (W.Freed) return;
        W.Freed = true;
        for (int b = 0; b < W.BlockCount; b++) FreeBlock(((byte**)_directory)[b], 1L << _blockShift);
        NativeMemory.AlignedFree((void*)_directory);
        FreeZeroedTable((void*)_buckets, _bucketBytes);
        FreePolicy();
    }

    /// <summary>Writes bytes across an entry's chunk chain, after the header (the links are written).</summary>
    /// <remarks>A contiguous entry's next chunk is the next 64 bytes (no link to load, no directory lookup), as in
    /// <see cref="CopyValue"/>; on any entry a whole chunk's payload is copied as one fixed-size block (unrolled vector
    /// moves instead of a memmove call per chunk). Both write the bytes the linked walk with a copy per piece would.</remarks>
    private ref struct ChunkWriter(CacheStore store, byte* entry, bool contiguous)
    {
        private byte* _chunk = entry;
        private int _offset = HeaderBytes;

        public void Write(ReadOnlySpan<byte> bytes)
        {
            while (!bytes.IsEmpty)
            {
                if (_offset == ChunkBytes)
                {
                    _chunk = contiguous ? _chunk + ChunkBytes : store.At(Link(_chunk));
                    _offset = LinkBytes;
                    if (bytes.Length >= ChunkPayload)
                    {
                        Unsafe.CopyBlockUnaligned(ref *(_chunk + LinkBytes), ref MemoryMarshal.GetReference(bytes), ChunkPayload);
                        _offset = ChunkBytes;
                        bytes = bytes[ChunkPayload..];
                        continue;
                    }
                }
                int n = Math.Min(bytes.Length, ChunkBytes - _offset);
                bytes[..n].CopyTo(new Span<byte>(_chunk + _offset, n));
                _offset += n;
                bytes = bytes[n..];
            }
        }
    }
}

/// <summary>How a budget is divided: the index, the directory of blocks, and the blocks.</summary>
internal readonly struct CacheLayout
{
    /// <summary>The smallest budget: the index, the directory and one 4 KiB block.</summary>
    public const long MinimumMaxBytes = 8 * 1024;
    /// <summary>The largest budget: chunk references are 32-bit.</summary>
    public const long MaximumMaxBytes = 128L << 30;
    /// <summary>Frequency sketch per chunk of space: 4 counters of 4 bits, some 28 counters per entry of the lab's mean
    /// size (seven chunks), as Caffeine's and ConcurrentLfu's 16 to 32 per entry. Half that let collisions inflate cold keys'
    /// estimates and lost hit ratio against ConcurrentLfu at the same entries; the second byte costs 1/64 of the budget.</summary>
    public const int SketchBytesPerChunk = 2;

    /// <summary>The smallest budget whose blocks are 2 MiB huge-page blocks.</summary>
    public const long HugeBlockBudget = 256L << 20;
    private const int HugeBlockShift = 21;

    public int BlockShift { get; }
    public int MaxBlocks { get; }
    public long Buckets { get; }
    public long FixedBytes { get; }
    public long CapacityChunks => (long)MaxBlocks << (BlockShift - CacheStore.ChunkShift);
    public long CapacityBytes => (long)MaxBlocks << BlockShift;

    public CacheLayout(long maxBytes)
    {
        // 4 KiB blocks below 1 MiB (a small cache wastes little), 64 KiB from 1 MiB (fewer allocations), 2 MiB huge-page
        // blocks from 256 MiB (random reads over the budget miss the TLB far less; the last block's unused part is at most
        // 1/128 of the budget).
        BlockShift = maxBytes >= HugeBlockBudget ? HugeBlockShift : maxBytes >= 1 << 20 ? 16 : 12;
        // One 4-byte bucket per 128 bytes of budget, rounded down to a power of two (1.6% to 3.1% of it). A hit walks the
        // entries before its own in its chain, each a dependent miss on a cold line (the next link lives in the entry), and
        // a full cache of 300-byte values holds an entry per ~400 bytes: at one bucket per 256 bytes a Zipf 0.99 hit
        // walked 0.2 to 0.55 other entries (by the budget's rounding), at one per 128 about half that. An entry takes at
        // least one 64-byte chunk, so chains stay short even when every entry is one chunk.
        Buckets = (long)BitOperations.RoundUpToPowerOf2((ulong)Math.Max(16, maxBytes / 128) + 1) / 2;
        long bucketBytes = Buckets * sizeof(uint);
        // Per block: the block, its directory pointer, and its chunks' share of the frequency sketch (SketchBytesPerChunk each, in whole 64-byte blocks of counters).
        long chunksPerBlock = 1L << (BlockShift - CacheStore.ChunkShift);
        MaxBlocks = (int)Math.Max(0, (maxBytes - bucketBytes) / ((1L << BlockShift) + sizeof(long) + chunksPerBlock * SketchBytesPerChunk));
        while (true)
        {
            SketchLongs = Math.Max(1, CapacityChunks * SketchBytesPerChunk / 64) * 8;
            FixedBytes = bucketBytes + (long)MaxBlocks * sizeof(long) + SketchLongs * sizeof(ulong);
            // The sketch's floor of 8 longs can pass the per-block share: one block less.
            if (MaxBlocks == 0 || FixedBytes + CapacityBytes <= maxBytes) break;
            MaxBlocks--;
        }
    }

    public long SketchLongs { get; }
}
