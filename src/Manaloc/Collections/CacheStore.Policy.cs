using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

namespace Manaloc.Collections;

/// <summary>
/// The cache's eviction policy, W-TinyLFU (the design of Caffeine and BitFaster's <c>ConcurrentLfu</c>): a count-min
/// sketch of 4-bit counters estimates each key's recent frequency; new entries enter a window LRU of about 1% of the
/// space; the rest is a segmented LRU (probation, and protected at 80% of it). To make room the window's oldest entry
/// (the candidate) competes with probation's oldest (the victim): the one with the lower estimated frequency is evicted,
/// so a one-pass scan or a loop larger than the cache cannot flush entries read more often.
/// </summary>
/// <remarks>
/// <para>Reads never block and move nothing: a hit sets a referenced byte in the entry's header (the line the read
/// already touched) and writes the entry's hash into the reading thread's stripe of a lossy ring (a plain counter
/// increment and a plain 8-byte store; stripes are dealt to threads round-robin as they first read the cache, see
/// <c>ReadTallies</c>; two threads sharing a stripe may overwrite each other's record, which only loses a frequency
/// sample). Writers drain the stripes into the sketch under the writer lock before they evict, and a reader
/// whose stripe wrapped drains it if it can take the lock without waiting (<c>Monitor.TryEnter</c>). The queues are
/// CLOCK-like, as S3-FIFO's and <c>ConcurrentLru</c>'s: where Caffeine moves a read entry at once, the writer looks at
/// the mark when the entry reaches a queue's least recent end: a read window or protected entry goes round again, a
/// read probation entry (victim or candidate) is promoted to protected; each look clears the mark.</para>
/// <para>The sketch is native and counted in the budget (two bytes per chunk). It counts reads and writes once the cache
/// has taken half its blocks, as Caffeine's starts at half its maximum: a cache below that evicts nothing soon, and its
/// reads only mark their entries. It counts by conservative update (only a
/// key's least counters rise), which keeps cold keys that collide with hot ones estimated near their own frequency.
/// Counters are halved after ten samples per entry held, or per sketch word if more (aging), so the estimates follow a
/// changing workload.</para>
/// </remarks>
internal sealed unsafe partial class CacheStore
{
    private const int ReadStripeSlots = 32;
    // The read rings' layout: one pinned array per store, each stripe a block of StripeLongs longs (its cursor, its 32
    // slots, then 31 longs of padding), the first block RingPad longs (128 bytes) into the array. A stripe's cursor and
    // slots are written by its thread on every read, so each block is followed by at least 128 bytes no thread writes and
    // the first is preceded by 128: no stripe shares a line (or the adjacent line the spatial prefetcher pairs with it)
    // with another stripe or with the objects allocated beside the array. One base reference, loaded once per read, and a
    // power-of-two stride make a record a shift, an add and two stores: one load of the array reference, no bounds checks.
    private const int RingPad = 16;
    private const int StripeShift = 6;
    private const int StripeLongs = 1 << StripeShift; // a cursor, 32 slots and 248 bytes of padding
    private const int SlotsOffset = 1; // the slots follow the cursor (its thread writes both: they may share a line)
    private const byte Window = 0, Probation = 1, Protected = 2;
    // The queue byte's low bits name the queue; Unjudged marks a graduate of the window not yet weighed against a victim.
    // Entries demoted from protected also join probation's most recent end, among the graduates: unmarked, they are
    // skipped, never judged as candidates (they earned their place by reads; judging them evicted warm entries).
    private const byte QueueMask = 3, Unjudged = 0x80;

    private readonly ulong* _sketch;
    private readonly uint _sketchBlocks; // 64-byte blocks of 8 words
    private readonly long _sampleSize;
    private readonly long _windowMax;
    private readonly long _protectedMax;
    private readonly uint[] _queueHead = new uint[3];  // most recent
    private readonly uint[] _queueTail = new uint[3];  // least recent
    private readonly long[] _queueWeight = new long[3];
    // The read rings (see RingPad): one array per store, allocated pinned (on the pinned object heap: the layout tests
    // measure its padding by address). A reader reaches its stripe through a managed reference into it (ReadCursor), which
    // keeps the array alive while it stores, and needs no null or bounds check: the array is made in the constructor and
    // every index is masked to it.
    private readonly long[] _readRing;
    private readonly long[] _drained;
    private readonly int _stripeMask;
    // Whether reads and writes are counted in the sketch: from the time the cache has taken half its blocks (Caffeine's
    // rule: its sketch starts counting at half the maximum). Below that nothing is evicted soon, and a frequency serves
    // only to choose what to evict; the counts missed are those of a cache's first half fill, which aging would halve
    // away anyway. Written once, false to true, by the writer (AddBlock; blocks are given back only with the store);
    // read plainly by readers: a read that sees it late skips one record, a sample the lossy ring may lose anyway.
    private bool _countsFrequency;

    private bool IsEmpty => _queueTail[Window] == 0 && _queueTail[Probation] == 0 && _queueTail[Protected] == 0;

    /// <summary>Records a read of <paramref name="entry"/>: its referenced byte set (if not set yet: a hot entry's line is
    /// not written again and again by every core) and its hash in the reading thread's stripe, for the sketch; true
    /// when the stripe wrapped.</summary>
    /// <remarks>Ordering: the reader reached the entry through an acquire load inside the <see cref="ReaderGate"/>; its
    /// chunks are not reused before every reader that was inside has left (<see cref="Reclaim"/>), so the plain byte
    /// store lands in this entry (live or retired), never in a chunk reused for another's bytes; <see cref="Set"/> clears
    /// the byte before the release store that links a new entry. The writer reads and clears it under its lock; a
    /// store racing the clear only keeps or loses one second chance.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool RecordAccess(byte* entry, int threadStripe)
    {
        if (*(entry + ReferencedOffset) == 0) *(entry + ReferencedOffset) = 1;
        // Below half the blocks the sketch counts nothing (see _countsFrequency): the mark above is the read's only record.
        if (!_countsFrequency) return false;
        ref long cursor = ref ReadCursor(threadStripe & _stripeMask);
        long at = cursor;
        cursor = at + 1; // plain: a lost increment only loses a sample
        long slot = at & (ReadStripeSlots - 1);
        Unsafe.Add(ref cursor, (nint)(SlotsOffset + slot)) = *(long*)(entry + HashOffset);
        return slot == ReadStripeSlots - 1;
    }

    /// <summary>Applies the recorded reads to the sketch (under the writer lock). A record is only a hash: it touches the
    /// sketch line and nothing else (a record of an entry since removed still counts a read that happened).</summary>
    /// <remarks>The hit path pays for it (a reader whose stripe wrapped drains, one record per read), so its loop is lean:
    /// the increment is inlined (<see cref="IncrementCore"/>) and, with AVX2, works on the key's whole sketch block at once
    /// with no branch but the saturation test (<see cref="RaiseVector"/>), the aging period is computed once per drain (it
    /// depends on the entries held, which a drain does not change), and the ring is indexed unchecked. The counts are exactly those of calling
    /// <see cref="Increment"/> per record in order (a test holds the two to the same sketch).</remarks>
    public void Drain()
    {
        long agingPeriod = AgingPeriod;
        for (int stripe = 0; stripe <= _stripeMask; stripe++) DrainStripe(stripe, agingPeriod);
    }

    /// <summary>As <see cref="Drain"/>, the records of one stripe only (under the writer lock): a reader whose stripe wrapped
    /// drains its own (<paramref name="threadStripe"/>, any int: masked to the stripes).</summary>
    /// <remarks>Why not every stripe: another thread's cursor and slots are lines that thread stores to on every read, so
    /// draining them took those lines from its core (and it took them back on its next read); the writer still drains
    /// every stripe before it evicts, and each stripe's own reader drains it when it wraps.</remarks>
    public void DrainOwn(int threadStripe) => DrainStripe(threadStripe & _stripeMask, AgingPeriod);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void DrainStripe(int stripe, long agingPeriod)
    {
        ref long cursor = ref ReadCursor(stripe);
        long end = Volatile.Read(ref cursor);
        long start = Math.Max(_drained[stripe], end - ReadStripeSlots);
        // The stripe's slots, indexed by the position's low bits.
        ref ulong slots = ref Unsafe.As<long, ulong>(ref Unsafe.Add(ref cursor, SlotsOffset));
        // The records' sketch lines are asked for first, so their cache misses overlap instead of each increment waiting for its own.
        if (Sse.IsSupported)
        {
            for (long at = start; at < end; at++) Sse.Prefetch0(SketchBlock(Unsafe.Add(ref slots, (nint)(at & (ReadStripeSlots - 1)))));
        }
        for (long at = start; at < end; at++)
        {
            ref ulong slot = ref Unsafe.Add(ref slots, (nint)(at & (ReadStripeSlots - 1)));
            ulong hash = slot;
            slot = 0;
            if (hash != 0) IncrementCore(hash, agingPeriod);
        }
        _drained[stripe] = end;
    }

    /// <summary>The read-ring block of <paramref name="stripe"/> (0 to <see cref="_stripeMask"/>, which every caller masks
    /// to): its cursor, followed by its <see cref="ReadStripeSlots"/> slots. In bounds: <see cref="_readRing"/> holds
    /// <c>RingPad + (_stripeMask + 1) * StripeLongs</c> longs and the block starts RingPad longs in. A managed reference,
    /// not a pointer: it keeps the array alive while a reader stores through it, also when the read is its cache's last use.
    /// The cost, against a raw pointer held in a field: one instruction per read, the JIT's null check of the array (a load
    /// of its header, a line no thread writes), 14 instructions for the record instead of 13.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref long ReadCursor(int stripe)
        => ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_readRing), RingPad + ((nint)(uint)stripe << StripeShift));

    /// <summary>For tests: walks each queue from its most recent end and checks that every link is mirrored by its
    /// neighbour's, each entry's queue byte names its queue, each queue's end and weight match the walk, and that the
    /// entries queued are those in the index (as many, each found by its key's bucket); returns the entries queued.</summary>
    internal long CheckQueues()
    {
        long queued = 0;
        for (byte queue = 0; queue < 3; queue++)
        {
            long weight = 0;
            uint previous = 0;
            for (uint reference = _queueHead[queue]; reference != 0; reference = *(uint*)(At(reference) + PolicyNextOffset))
            {
                byte* entry = At(reference);
                if ((*(entry + QueueOffset) & QueueMask) != queue) throw new InvalidOperationException($"Entry {reference} is in queue {queue} but marked {*(entry + QueueOffset) & QueueMask}.");
                if (*(uint*)(entry + PolicyPrevOffset) != previous) throw new InvalidOperationException($"Entry {reference} of queue {queue} links back to {*(uint*)(entry + PolicyPrevOffset)}, not {previous}.");
                uint* link = (uint*)_buckets + ((uint)*(ulong*)(entry + HashOffset) & _bucketMask);
                while (*link != reference && *link != 0) link = (uint*)(At(*link) + BucketNextOffset);
                if (*link != reference) throw new InvalidOperationException($"Entry {reference} of queue {queue} is not in its bucket.");
                weight += Weight(entry);
                queued++;
                previous = reference;
                if (queued > W.Count) throw new InvalidOperationException($"The queues hold more entries than the {W.Count} counted (a cycle?).");
            }
            if (_queueTail[queue] != previous) throw new InvalidOperationException($"Queue {queue} ends at {previous} but its tail is {_queueTail[queue]}.");
            if (_queueWeight[queue] != weight) throw new InvalidOperationException($"Queue {queue} weighs {weight} chunks but counts {_queueWeight[queue]}.");
        }
        if (queued != W.Count) throw new InvalidOperationException($"The queues hold {queued} entries; {W.Count} are counted.");
        return queued;
    }

    /// <summary>Whether the entry was read since the writer last looked; clears the mark (a second chance is given once per read).</summary>
    private static bool TakeReferenced(byte* entry)
    {
        if (*(entry + ReferencedOffset) == 0) return false;
        *(entry + ReferencedOffset) = 0;
        return true;
    }

    // ---- queues: doubly linked through the header, head most recent ----

    private void PushFront(byte queue, uint reference, byte* entry, long chunks)
    {
        *(entry + QueueOffset) = queue;
        *(uint*)(entry + PolicyPrevOffset) = 0;
        uint head = _queueHead[queue];
        *(uint*)(entry + PolicyNextOffset) = head;
        if (head != 0) *(uint*)(At(head) + PolicyPrevOffset) = reference;
        else _queueTail[queue] = reference;
        _queueHead[queue] = reference;
        _queueWeight[queue] += chunks;
    }

    private void Unqueue(uint reference, byte* entry)
    {
        byte queue = (byte)(*(entry + QueueOffset) & QueueMask);
        uint prev = *(uint*)(entry + PolicyPrevOffset), next = *(uint*)(entry + PolicyNextOffset);
        if (reference == W.Candidate) W.Candidate = NextUnjudged(prev); // the next graduate, toward probation's most recent end
        if (prev != 0) *(uint*)(At(prev) + PolicyNextOffset) = next;
        else _queueHead[queue] = next;
        if (next != 0) *(uint*)(At(next) + PolicyPrevOffset) = prev;
        else _queueTail[queue] = prev;
        _queueWeight[queue] -= Weight(entry);
    }

    /// <summary><paramref name="reference"/> or the first entry toward probation's most recent end marked <see cref="Unjudged"/>; 0 if none.
    /// Amortised O(1): the walk passes each demoted entry once, and <see cref="WriterState.Candidate"/> only moves toward the most recent end.</summary>
    private uint NextUnjudged(uint reference)
    {
        while (reference != 0 && (*(At(reference) + QueueOffset) & Unjudged) == 0) reference = *(uint*)(At(reference) + PolicyPrevOffset);
        return reference;
    }

    private static long Weight(byte* entry) => ChunksFor(*(int*)(entry + KeyLengthOffset), *(int*)(entry + ValueLengthOffset));

    private void OnAdded(uint reference, byte* entry, long chunks)
    {
        Increment(*(ulong*)(entry + HashOffset));
        PushFront(Window, reference, entry, chunks);
        // The window's overflow graduates to probation's most recent end; the oldest graduate not yet judged is the
        // candidate the next eviction weighs against probation's least recent entry.
        while (_queueWeight[Window] > _windowMax && _queueTail[Window] != reference)
        {
            // The window is a CLOCK: its oldest entry, read since it was last looked at, goes round again.
            if (SecondChance(Window)) continue;
            uint graduate = MoveLeastRecentToProbation(Window);
            // While the budget is not reached nothing is evicted: graduates simply join main.
            if (W.BlockCount == _maxBlocks)
            {
                *(At(graduate) + QueueOffset) |= Unjudged;
                if (W.Candidate == 0) W.Candidate = graduate;
            }
        }
    }

    /// <summary>If <paramref name="queue"/>'s least recent entry was read since it was last looked at, moves it to the
    /// queue's most recent end (its mark cleared) and returns true.</summary>
    private bool SecondChance(byte queue)
    {
        uint reference = _queueTail[queue];
        byte* entry = At(reference);
        if (!TakeReferenced(entry)) return false;
        long weight = Weight(entry);
        Unqueue(reference, entry);
        PushFront(queue, reference, entry, weight);
        return true;
    }

    /// <summary>A read probation entry is promoted to protected (its mark cleared); protected over its share gives its
    /// read entries a second chance and demotes its least recent unread one to probation.</summary>
    private void Promote(uint reference, byte* entry)
    {
        *(entry + ReferencedOffset) = 0;
        long weight = Weight(entry);
        Unqueue(reference, entry);
        PushFront(Protected, reference, entry, weight);
        while (_queueWeight[Protected] > _protectedMax && _queueTail[Protected] != reference)
        {
            if (SecondChance(Protected)) continue;
            MoveLeastRecentToProbation(Protected);
        }
    }

    /// <summary>Moves the least recent entry of <paramref name="queue"/> to probation's most recent end; returns its reference.</summary>
    private uint MoveLeastRecentToProbation(byte queue)
    {
        uint reference = _queueTail[queue];
        byte* entry = At(reference);
        long weight = Weight(entry);
        Unqueue(reference, entry);
        PushFront(Probation, reference, entry, weight);
        return reference;
    }

    /// <summary>Removes one entry: an expired one met at a queue's least recent end first; otherwise the loser of the
    /// oldest unjudged graduate (the candidate) against probation's least recent entry (the victim), by estimated frequency.</summary>
    private void EvictOne(long now, ref CacheCounters counters)
    {
        Drain();
        for (byte q = 0; q < 3; q++)
        {
            uint tail = _queueTail[q];
            if (tail != 0 && IsExpired(At(tail), now))
            {
                RemoveEntry(tail, At(tail));
                counters.Expirations++;
                return;
            }
        }
        // Reads mark entries instead of moving them: probation's oldest and the candidate, if read since they were last
        // looked at, are promoted to protected (a read in probation promotes), and the next ones judged.
        uint victim;
        while ((victim = _queueTail[Probation]) != 0 && *(At(victim) + ReferencedOffset) != 0) Promote(victim, At(victim));
        while (W.Candidate != 0 && W.Candidate != victim && *(At(W.Candidate) + ReferencedOffset) != 0) Promote(W.Candidate, At(W.Candidate));
        uint evicted;
        if (victim == 0)
        {
            evicted = _queueTail[Protected] != 0 ? _queueTail[Protected] : _queueTail[Window];
        }
        else
        {
            // The candidate: the oldest graduate not yet judged, else the window's least recent entry (so that evictions
            // ahead of need, the reclaim batch, weigh new entries too instead of draining main).
            bool graduate = W.Candidate != 0 && W.Candidate != victim;
            uint candidate = graduate ? W.Candidate : _queueTail[Window];
            if (candidate == 0)
            {
                evicted = victim;
            }
            else
            {
                byte* c = At(candidate);
                bool admit = Admit(*(ulong*)(c + HashOffset), *(ulong*)(At(victim) + HashOffset));
                // Judged: the next graduate toward probation's most recent end is judged next.
                if (graduate)
                {
                    *(c + QueueOffset) &= QueueMask;
                    W.Candidate = NextUnjudged(*(uint*)(c + PolicyPrevOffset));
                }
                evicted = admit ? victim : candidate;
                if (admit && !graduate)
                {
                    long w = Weight(c);
                    Unqueue(candidate, c);
                    PushFront(Probation, candidate, c, w);
                }
            }
        }
        RemoveEntry(evicted, At(evicted));
        counters.Evictions++;
    }

    /// <summary>Caffeine's admission: the candidate enters if it is estimated more frequent than the victim; a warm
    /// candidate that ties or loses still enters once in 128 at random, so keys crafted to collide in the sketch cannot
    /// shut the cache.</summary>
    private bool Admit(ulong candidateHash, ulong victimHash)
    {
        int candidate = Frequency(candidateHash), victim = Frequency(victimHash);
        if (candidate > victim) return true;
        if (candidate <= 5) return false;
        W.Random ^= W.Random << 13;
        W.Random ^= W.Random >> 17;
        W.Random ^= W.Random << 5;
        return (W.Random & 127) == 0;
    }

    // ---- count-min sketch: 16 4-bit counters per word; a key's 4 counters in one 64-byte block of 8 words ----
    // (Caffeine's layout since 3.0: one cache line per estimate or increment instead of four.) The block is picked by
    // the hash's high word scaled to the block count (a multiply-high, so the sketch need not be a power of two; the
    // bucket took the hash's low bits); each counter by a byte of a rehash of the low word: the byte's
    // low bit picks one of the counter's two words (counter i in words 2i and 2i+1), its next four bits the nibble.

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ulong* SketchBlock(ulong hash) => _sketch + (((hash >> 32) * _sketchBlocks) >> 32 << 3);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint CounterBits(ulong hash) => (uint)hash * 0x9E3779B9u;

    /// <summary>For tests: whether <paramref name="entry"/> was read since the policy last looked (its referenced mark).</summary>
    internal static bool ReadMarked(byte* entry) => *(entry + ReferencedOffset) != 0;

    /// <summary>For tests: whether the sketch counts reads and writes yet (see <see cref="_countsFrequency"/>).</summary>
    internal bool CountsFrequency => Volatile.Read(ref _countsFrequency);

    /// <summary>The estimate of <paramref name="hash"/>'s frequency: the least of its four counters.</summary>
    internal int Frequency(ulong hash)
    {
        ulong* block = SketchBlock(hash);
        uint bits = CounterBits(hash);
        int frequency = int.MaxValue;
        for (int i = 0; i < 4; i++, bits >>= 8) frequency = Math.Min(frequency, Counter(block, bits, i));
        return frequency;
    }

    /// <summary>The value of <paramref name="hash"/>'s counter in row <paramref name="row"/> (0 to 3).</summary>
    internal int Counter(ulong hash, int row) => Counter(SketchBlock(hash), CounterBits(hash) >> (row * 8), row);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int Counter(ulong* block, uint bits, int row) => (int)((block[(row << 1) + (int)(bits & 1)] >> (int)((bits >> 1) & 15) * 4) & 0xF);

    /// <summary>
    /// Counts one occurrence of <paramref name="hash"/> by conservative update: only its counters at its estimate (the
    /// least of the four) are raised. A counter above the estimate already counts other keys that share it, and raising it
    /// too would only inflate their estimates, so colliding cold keys are estimated closer to their own frequency and
    /// admission weighs a candidate against a victim more exactly. The estimate itself rises by one as with a plain
    /// increment of all four.
    /// </summary>
    /// <remarks>One pass over the block: each row's counter is in a word of its own (rows 2i and 2i+1), so raising one
    /// row's counter changes no other row's, and the four counters read once for the estimate are the values to compare
    /// with it (the drain counts a hash per record read: computing the block and bits and loading the words twice was
    /// half its work).</remarks>
    internal void Increment(ulong hash) => IncrementCore(hash, AgingPeriod);

    /// <summary>Caffeine's and ConcurrentLfu's aging period: ten samples per entry the cache holds (never under ten per sketch word).</summary>
    private long AgingPeriod => Math.Max(_sampleSize, 10 * W.Count);

    /// <summary><see cref="Increment"/> with the aging period given (the drain computes it once for all its records).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void IncrementCore(ulong hash, long agingPeriod)
    {
        // A saturated key (every counter at 15) moves no counter, so it is no sample of the aging period.
        bool raised = Avx2.IsSupported ? RaiseVector(hash) : RaiseScalar(hash);
        if (raised && ++W.Samples >= agingPeriod) Age();
    }

    /// <summary>The conservative update of <paramref name="hash"/>'s counters one word at a time; false if its estimate is
    /// 15 (nothing raised). The rule <see cref="RaiseVector"/> computes on the whole block at once.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool RaiseScalar(ulong hash)
    {
        ulong* block = SketchBlock(hash);
        uint bits = CounterBits(hash);
        // Unsigned offsets: no sign extension per word.
        ulong* w0 = block + (bits & 1), w1 = block + 2 + ((bits >> 8) & 1);
        ulong* w2 = block + 4 + ((bits >> 16) & 1), w3 = block + 6 + ((bits >> 24) & 1);
        // Each row's nibble (4 bits after its word bit) times 4, as one shift and mask: (bits >> (8i + 1) & 15) * 4.
        int s0 = (int)((bits << 1) & 60), s1 = (int)((bits >> 7) & 60);
        int s2 = (int)((bits >> 15) & 60), s3 = (int)((bits >> 23) & 60);
        int c0 = (int)((*w0 >> s0) & 0xF), c1 = (int)((*w1 >> s1) & 0xF);
        int c2 = (int)((*w2 >> s2) & 0xF), c3 = (int)((*w3 >> s3) & 0xF);
        int estimate = Math.Min(Math.Min(c0, c1), Math.Min(c2, c3));
        if (estimate == 15) return false;
        if (c0 == estimate) *w0 += 1UL << s0;
        if (c1 == estimate) *w1 += 1UL << s1;
        if (c2 == estimate) *w2 += 1UL << s2;
        if (c3 == estimate) *w3 += 1UL << s3;
        return true;
    }

    /// <summary>
    /// The conservative update of <paramref name="hash"/>'s counters with the block's eight words in two 256-bit
    /// registers (AVX2); false if its estimate is 15 (nothing raised). The same counters rise as in
    /// <see cref="RaiseScalar"/> (a test holds the two to the same sketch over many keys).
    /// </summary>
    /// <remarks>
    /// <para>Why: every read is one record and every record one increment, so the drain's increment runs once per read. One
    /// word at a time it was some 60 instructions (four addresses, four shifts, four extracts, a min of four, four
    /// conditional adds, and spills: the JIT ran out of registers); on the whole block it is about half that, with no
    /// branch but the saturation test.</para>
    /// <para>How: word j of the block belongs to row j / 2, whose byte of the bits (bits &gt;&gt; 8 * row) picks one of the
    /// row's two words by its low bit and the nibble by its next four. Each word gets a shift: 4 * the nibble when the row
    /// picks it, 64 more when it does not; a variable shift by 64 or more gives 0 (vpsrlvq, vpsllvq). Each word's rest, 15
    /// minus its picked counter ((~word &gt;&gt; shift) &amp; 15), is then 0 for a word not picked, so the largest rest is
    /// 15 minus the estimate, found over all eight words; 0 means saturated. The words whose rest equals it hold a
    /// counter at the estimate and are raised by 1 &lt;&lt; shift (0 for a word not picked). The block is one 64-byte line of
    /// the sketch (64-byte aligned), loaded and stored whole; only this thread writes the sketch (the writer lock).</para>
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool RaiseVector(ulong hash)
    {
        ulong* block = SketchBlock(hash);
        // Per word (as 32-bit lanes, widened below): its row's byte, then the shift.
        Vector256<uint> rowBytes = Avx2.ShiftRightLogicalVariable(Vector256.Create(CounterBits(hash)), Vector256.Create(0u, 0, 8, 8, 16, 16, 24, 24));
        Vector256<uint> notPicked = (rowBytes ^ Vector256.Create(0u, 1, 0, 1, 0, 1, 0, 1)) & Vector256<uint>.One;
        Vector256<uint> shifts = ((rowBytes << 1) & Vector256.Create(60u)) | (notPicked << 6);
        Vector256<ulong> shiftsLow = Avx2.ConvertToVector256Int64(shifts.GetLower()).AsUInt64();
        Vector256<ulong> shiftsHigh = Avx2.ConvertToVector256Int64(shifts.GetUpper()).AsUInt64();
        Vector256<ulong> low = Avx.LoadVector256(block), high = Avx.LoadVector256(block + 4);
        Vector256<ulong> restLow = Avx2.ShiftRightLogicalVariable(~low, shiftsLow) & Vector256.Create(15UL);
        Vector256<ulong> restHigh = Avx2.ShiftRightLogicalVariable(~high, shiftsHigh) & Vector256.Create(15UL);
        // The largest rest in every lane. Rests are below 16 (each lane's high 32 bits are 0), so the 32-bit unsigned max is
        // the 64-bit one; two swaps (the halves, then the neighbours) spread it to every lane.
        Vector256<uint> largest = Avx2.Max(restLow.AsUInt32(), restHigh.AsUInt32());
        largest = Avx2.Max(largest, Avx2.Permute4x64(largest.AsUInt64(), 0b01_00_11_10).AsUInt32());
        largest = Avx2.Max(largest, Avx2.Permute4x64(largest.AsUInt64(), 0b10_11_00_01).AsUInt32());
        if (largest.ToScalar() == 0) return false;
        Vector256<ulong> atEstimate = largest.AsUInt64();
        Avx.Store(block, low + (Avx2.ShiftLeftLogicalVariable(Vector256<ulong>.One, shiftsLow) & Vector256.Equals(restLow, atEstimate)));
        Avx.Store(block + 4, high + (Avx2.ShiftLeftLogicalVariable(Vector256<ulong>.One, shiftsHigh) & Vector256.Equals(restHigh, atEstimate)));
        return true;
    }

    /// <summary>For tests: the sketch's words.</summary>
    internal ReadOnlySpan<ulong> SketchWords => new(_sketch, checked((int)_sketchBlocks * 8));

    /// <summary>For tests: <see cref="RaiseScalar"/> or <see cref="RaiseVector"/> (when AVX2 is supported) with the aging
    /// step of <see cref="Increment"/>; false if AVX2 was asked for and is not supported (nothing done).</summary>
    internal bool IncrementWith(ulong hash, bool vector)
    {
        if (vector && !Avx2.IsSupported) return false;
        bool raised = vector ? RaiseVector(hash) : RaiseScalar(hash);
        if (raised && ++W.Samples >= AgingPeriod) Age();
        return true;
    }

    /// <summary>Halves every counter: old frequencies fade. A zero word is read, not written: a page of the sketch no
    /// key has touched stays unwritten (on Linux reading it maps the kernel's shared zero page), so aging does not make
    /// the whole sketch resident in a cache that holds far less than its budget.</summary>
    private void Age()
    {
        for (long i = 0; i < (long)_sketchBlocks << 3; i++)
        {
            ulong word = _sketch[i];
            if (word != 0) _sketch[i] = (word >> 1) & 0x7777777777777777UL;
        }
        W.Samples /= 2;
    }

    private void FreePolicy()
    {
        FreeZeroedTable(_sketch, _sketchBytes);
    }
}
