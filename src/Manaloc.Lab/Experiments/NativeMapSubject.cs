using System.Collections.Concurrent;
using System.Numerics;
using System.Runtime.InteropServices;
using FASTER.core;
using Manaloc.Collections;
using Manaloc.Lab.Platform;
using HugePageBlocks = Manaloc.Platform.HugePageBlocks;
using Session = FASTER.core.ClientSession<long, Manaloc.Lab.Experiments.MapValue, Manaloc.Lab.Experiments.MapValue, Manaloc.Lab.Experiments.MapValue,
    FASTER.core.Empty, FASTER.core.SimpleFunctions<long, Manaloc.Lab.Experiments.MapValue>>;

namespace Manaloc.Lab.Experiments;

/// <summary>One map's operations, as a struct so each variant's loops are compiled for it with direct calls.</summary>
internal interface IMapOperations
{
    /// <summary>Adds a key known to be absent.</summary>
    bool TryAdd(long key, in MapValue value);

    /// <summary>Reads a key's value.</summary>
    bool TryGetValue(long key, out MapValue value);

    /// <summary>Replaces the value of a key known to be present.</summary>
    void Update(long key, in MapValue value);
}

/// <summary>
/// One variant of the native-map experiment: a map of <see cref="long"/> keys to <see cref="MapValue"/>, grown one
/// insert at a time, then read and updated by up to <see cref="MaxThreads"/> threads, each through its own
/// <see cref="IMapOperations"/> (FASTER needs a session per thread).
/// </summary>
internal abstract class MapSubject : IDisposable
{
    /// <summary>Threads a subject serves at once.</summary>
    public const int MaxThreads = 2;

    /// <summary>Its variant name.</summary>
    public abstract string Variant { get; }

    /// <summary>Whether two threads may read it at once (documented for <c>Dictionary</c> without writers).</summary>
    public abstract bool ConcurrentReads { get; }

    /// <summary>Whether threads may read and write it at once.</summary>
    public abstract bool ConcurrentWrites { get; }

    /// <summary>
    /// Inserts the keys of indexes [<paramref name="from"/>, <paramref name="to"/>) in order and returns the longest
    /// single insert (in <see cref="LabClock"/> ticks) by the disturbance rule of <see cref="GrowthTrace"/>, which insert it
    /// was, whether a collection ran during it, and the longest of all inserts' wall time.
    /// With <paramref name="floor"/>, each block of inserts is followed by a block of the floor's trivial operations for as
    /// long as the inserts took (see <see cref="GrowthFloor"/>). With <paramref name="blocks"/>, each block's judged
    /// slowest insert is also kept there, in block order (see <see cref="GrowthBlocks"/>); a second growth's block that
    /// can change neither its recurring figure nor its floor's is inserted untimed and kept as skipped.
    /// </summary>
    public abstract GrowthTrace Grow(long from, long to, GrowthFloor? floor = null, GrowthBlocks? blocks = null);

    /// <summary>
    /// Inserts the keys of indexes [0, <paramref name="entries"/>) into the empty map in order, untimed: the lookups'
    /// set-up, the same entries in the same order as <see cref="Grow"/> without its clock reads around every insert.
    /// </summary>
    public abstract void Fill(long entries);

    /// <summary>
    /// Looks up <paramref name="count"/> keys of <paramref name="stream"/> on behalf of <paramref name="thread"/>,
    /// from where that thread's previous call left off; returns a sum of the values read.
    /// </summary>
    /// <exception cref="InvalidOperationException">A key of the stream was not found: the map lost an entry.</exception>
    public abstract long Lookups(int thread, LookupStream stream, long count);

    /// <summary>As <see cref="Lookups"/>, every twentieth operation an update of the key instead of a read (95% reads, 5% updates).</summary>
    public abstract long Mix(int thread, LookupStream stream, long count);

    /// <summary>Frees the map.</summary>
    public abstract void Dispose();

    // One cursor per thread, a cache line apart: each call goes on through the stream where the last one stopped, so a
    // short calibration call does not read the same few (then cached) keys again and again.
    private readonly long[] _cursors = new long[MaxThreads * 8];

    /// <summary>Where <paramref name="thread"/>'s next call starts in a stream.</summary>
    protected ref long CursorOf(int thread) => ref _cursors[thread * 8];

    /// <summary>The failure of a lookup loop that found fewer keys than it looked up.</summary>
    protected InvalidOperationException Missed(long missed, long of)
        => new($"{Variant}: {missed} of {of} lookups of inserted keys found nothing; the map lost entries.");
}

/// <summary>What a growth saw of its slowest insert.</summary>
/// <remarks>
/// An insert's wall time includes any time the thread lost to something other than its own work: the scheduler giving the
/// core to another thread (a 4 ms tick or more on a busy 2-core machine), the host stealing the virtual CPU, a page fault
/// blocked on I/O. None of that is the map's. So the growth is timed in blocks of <see cref="BlockInserts"/> inserts, each
/// judged by <see cref="ThreadDisturbance"/> (the thread's involuntary switches and its CPU time against the wall clock,
/// read between blocks: no allocation). In an undisturbed block, the slowest insert's wall time is taken. A disturbed
/// block is not dropped: its slowest insert counts for its wall time less all the time the block lost, a lower bound on
/// that insert's own CPU time, so a step that is the thread's own work (a resize's copying) stays in the figure even when
/// the machine stalled the same block, and a stall alone counts for nothing. Every variant and the growth's floor are
/// judged by the same rule. Where the system tells neither counter, every insert counts for its wall time.
/// </remarks>
/// <param name="WorstTicks">The longest single insert by that rule, in <see cref="LabClock"/> ticks: the judged figure.</param>
/// <param name="WorstIndex">The key index whose insert it was.</param>
/// <param name="WorstSawCollection">Whether a garbage collection ran while it did (the runtime's stall, not the map's).</param>
/// <param name="AnyWorstTicks">The longest single insert's wall time, disturbed or not.</param>
/// <param name="Blocks">Blocks timed.</param>
/// <param name="DisturbedBlocks">Blocks that lost time to something other than their own work (-1: the system does not tell).</param>
/// <param name="WorstFromDisturbed">Whether the judged figure is a disturbed block's lower bound.</param>
internal readonly record struct GrowthTrace(long WorstTicks, long WorstIndex, bool WorstSawCollection, long AnyWorstTicks, long Blocks, long DisturbedBlocks, bool WorstFromDisturbed)
{
    /// <summary>Inserts per block between two reads of the thread's counters.</summary>
    public const int BlockInserts = 256;

    /// <summary>Nothing grown yet.</summary>
    public static GrowthTrace None(long from) => new(0, from, false, 0, 0, 0, false);

    /// <summary>
    /// One timed block's trace: its slowest operation counted for its wall time when the block was undisturbed, else for
    /// the lower bound <see cref="BlockDisturbance.OwnTimeAtLeast"/> (kept whole as the slowest of all either way).
    /// </summary>
    public static GrowthTrace Block(long worstTicks, long worstIndex, bool worstSawCollection, BlockDisturbance disturbance)
    {
        long judged = disturbance.Disturbed ? disturbance.OwnTimeAtLeast(worstTicks) : worstTicks;
        long disturbed = !disturbance.Known ? -1 : disturbance.Disturbed ? 1 : 0;
        return new(judged, worstIndex, worstSawCollection, worstTicks, 1, disturbed, disturbance.Disturbed);
    }

    /// <summary>Two growths' traces together: each maximum of both, the block counts summed.</summary>
    public static GrowthTrace Worst(GrowthTrace a, GrowthTrace b)
    {
        var slower = b.WorstTicks > a.WorstTicks ? b : a;
        return new(slower.WorstTicks, slower.WorstIndex, slower.WorstSawCollection, Math.Max(a.AnyWorstTicks, b.AnyWorstTicks),
            a.Blocks + b.Blocks, a.DisturbedBlocks < 0 || b.DisturbedBlocks < 0 ? -1 : a.DisturbedBlocks + b.DisturbedBlocks, slower.WorstFromDisturbed);
    }
}

/// <summary>
/// The longest insert's floor: the growth's own timed loop with the map taken out, to tell a map's slow step from what
/// the machine alone puts into one timed operation (an interrupt, a stall the disturbance rule does not see, the
/// timestamps' own cost). After each block of inserts, <see cref="RunBlockBeside"/> times trivial operations (the next
/// key's mix, which an insert's timed span computes too) one by one for as long as that block took, under the same rule
/// (<see cref="GrowthTrace"/>). Alternating block by block, the floor and the inserts share the same seconds of the
/// machine's weather and the same exposure: the floor's longest operation is what the longest insert would be if every
/// insert were as cheap as a key's mix.
/// </summary>
/// <remarks>
/// A disturbed block of inserts took the time the thread lost as well; a floor block that long would be disturbed more
/// often in turn and give the floor more exposure than the growth had. So after a disturbed block the floor runs for the
/// mean of the undisturbed blocks so far (the block's own time before there is one).
/// A trivial operation's timed span is a smaller share of its loop than an insert's, so a stall of the machine lands in
/// one a little less often: the floor can only come out lower than the inserts' own exposure would give, which makes
/// "at the floor" harder to reach, never easier.
/// </remarks>
/// <param name="blocks">Where each floor block's judged slowest operation is also kept, in block order (one floor block
/// per block of inserts, so the floor's blocks line up with the growth's), or null.</param>
internal sealed class GrowthFloor(GrowthBlocks? blocks = null)
{
    private long _operations;
    private long _sink;
    private long _undisturbedTicks, _undisturbedBlocks;

    /// <summary>The longest trivial operation so far, by <see cref="GrowthTrace"/>'s rule; its index counts the floor's operations.</summary>
    public GrowthTrace Trace { get; private set; } = GrowthTrace.None(0);

    /// <summary>Trivial operations timed so far.</summary>
    public long Operations => _operations;

    /// <summary>
    /// One floor block beside a block of inserts that took <paramref name="insertTicks"/> (<see cref="LabClock"/> ticks):
    /// for as long, or, when the inserts were <paramref name="disturbed"/>, for as long as their undisturbed blocks took
    /// on average (see the remarks).
    /// </summary>
    /// <remarks>
    /// Beside a second growth (its blocks set <see cref="GrowthBlocks.Against"/> the first floor's), a block that cannot
    /// change the floor's longest operation that recurs is kept untimed instead (<see cref="GrowthBlocks.Skip"/>). A block
    /// that runs does so beside a timed block of inserts, for as long as it took; the inserts' blocks beside skipped ones
    /// still count into the undisturbed mean, untimed and so shorter, which can only shorten a floor block that runs for
    /// that mean: the floor comes out lower, never higher.
    /// </remarks>
    public void RunBlockBeside(long insertTicks, bool disturbed)
    {
        long ticks = TicksBeside(insertTicks, disturbed);
        if (NextBlockCanMatter) RunBlock(ticks);
        else blocks!.Skip();
    }

    /// <summary>Whether the next block beside the inserts could change the floor's longest operation that recurs, and so runs (always, beside a first growth or with no blocks kept).</summary>
    public bool NextBlockCanMatter => blocks is null || blocks.CanMatter(blocks.Count);

    /// <summary>How long the floor block beside a block of inserts runs (see <see cref="RunBlockBeside"/>), counting that block into the undisturbed mean when it was not disturbed.</summary>
    internal long TicksBeside(long insertTicks, bool disturbed)
    {
        if (!disturbed)
        {
            _undisturbedTicks += insertTicks;
            _undisturbedBlocks++;
        }
        return disturbed && _undisturbedBlocks > 0 ? _undisturbedTicks / _undisturbedBlocks : insertTicks;
    }

    /// <summary>Times trivial operations one by one until <paramref name="ticks"/> (<see cref="LabClock"/> ticks, at least one operation) have passed: one block.</summary>
    public void RunBlock(long ticks)
    {
        var mark = ThreadDisturbance.Begin();
        long i = _operations, sink = _sink;
        long blockWorst = 0, blockWorstIndex = i;
        bool blockWorstSawCollection = false;
        long began = LabClock.Now, end = began + ticks, now;
        do
        {
            int collections = GC.CollectionCount(0); // outside the timed span, as the inserts' loop reads it
            long start = LabClock.Now;
            sink += NativeMapWorkload.Key(i);
            now = LabClock.Now;
            long took = now - start;
            if (took > blockWorst) (blockWorst, blockWorstIndex, blockWorstSawCollection) = (took, i, GC.CollectionCount(0) != collections);
            i++;
        }
        while (now < end);
        var disturbance = ThreadDisturbance.End(mark, now - began);
        (_operations, _sink) = (i, sink); // the sink keeps the mix from being optimised away
        var block = GrowthTrace.Block(blockWorst, blockWorstIndex, blockWorstSawCollection, disturbance);
        blocks?.Add(block.WorstTicks, blockWorstIndex);
        Trace = GrowthTrace.Worst(Trace, block);
    }
}

/// <summary>
/// One growth's timed blocks in order, each by its judged slowest operation (<see cref="GrowthTrace.Block"/>'s rule), so
/// two growths of the same variant through the same checkpoints can be compared block by block: their blocks cover the
/// same key indexes, since a growth's blocks start at each checkpoint and every <see cref="GrowthTrace.BlockInserts"/>
/// inserts after it.
/// </summary>
/// <remarks>
/// A second growth's blocks (<see cref="Against"/>) know the first's and keep the longest operation that recurs so far
/// (<see cref="RecurringSoFar"/>, <see cref="Recurring"/>'s figure over the blocks kept). A block whose first-growth worst
/// is at or below it cannot change that figure at this block's checkpoint or any later one, whatever the second growth
/// would time there (the lesser of the two is at most the first), so a second growth may leave it untimed
/// (<see cref="Skip"/>, kept as 0: its keys inserted without timestamps, or no floor block run beside it), and may stop
/// once no block left can (<see cref="AnyCanMatterFrom"/>): the figure at every checkpoint is then the one timing every
/// block would give. <see cref="Skip"/> refuses a block that could matter.
/// A first growth's blocks are allocated whole before the growth (<see cref="For"/> blocks): adding a block allocates
/// nothing, so the arrays sit in the baseline of the heap the growth phase weighs.
/// </remarks>
internal sealed class GrowthBlocks
{
    private readonly long[] _worstTicks;
    private readonly long[] _firstIndex;
    private readonly GrowthBlocks? _first;
    private readonly long[]? _firstWorstFrom; // [b]: the first growth's largest block worst over blocks b.. (its suffix maxima)

    /// <summary>Room for <paramref name="capacity"/> blocks.</summary>
    public GrowthBlocks(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        (_worstTicks, _firstIndex) = (new long[capacity], new long[capacity]);
    }

    private GrowthBlocks(GrowthBlocks first)
        : this(first.Count)
    {
        _first = first;
        _firstWorstFrom = new long[first.Count + 1];
        for (int b = first.Count - 1; b >= 0; b--) _firstWorstFrom[b] = Math.Max(first.WorstTicks[b], _firstWorstFrom[b + 1]);
    }

    /// <summary>A second growth's blocks, set against <paramref name="first"/>'s (all of them kept: the first growth is over).</summary>
    public static GrowthBlocks Against(GrowthBlocks first) => new(first ?? throw new ArgumentNullException(nameof(first)));

    /// <summary>Blocks kept so far, timed or skipped.</summary>
    public int Count { get; private set; }

    /// <summary>Blocks left untimed (<see cref="Skip"/>).</summary>
    public int Skipped { get; private set; }

    /// <summary>The judged slowest operation of each block kept, in <see cref="LabClock"/> ticks (0 for a skipped block).</summary>
    public ReadOnlySpan<long> WorstTicks => _worstTicks.AsSpan(0, Count);

    /// <summary>A second growth's longest operation that recurs over the blocks kept so far (0 for a first growth).</summary>
    public long RecurringSoFar { get; private set; }

    /// <summary>The index (key index, or the floor's operation index) <see cref="Add"/> was given with <paramref name="block"/> (-1: skipped).</summary>
    public long IndexOf(int block) => _firstIndex[block];

    /// <summary>Whether timing <paramref name="block"/> could change the longest operation that recurs (always, in a first growth).</summary>
    public bool CanMatter(int block) => _first is null || block >= _first.Count || _first.WorstTicks[block] > RecurringSoFar; // past the first's blocks: timed, and refused by Add

    /// <summary>Whether timing any block from <paramref name="block"/> on could change the longest operation that recurs (always, in a first growth, while it has room).</summary>
    public bool AnyCanMatterFrom(int block) => _firstWorstFrom is null ? block < _worstTicks.Length : _firstWorstFrom[block] > RecurringSoFar;

    /// <summary>Keeps the next block's judged slowest operation (<paramref name="judgedTicks"/>) and an index that names it.</summary>
    /// <exception cref="InvalidOperationException">More blocks than the room given at construction.</exception>
    public void Add(long judgedTicks, long index)
    {
        if (Count == _worstTicks.Length) throw new InvalidOperationException($"A growth timed more blocks than the {_worstTicks.Length} it was sized for.");
        (_worstTicks[Count], _firstIndex[Count]) = (judgedTicks, index);
        if (_first is not null) RecurringSoFar = Math.Max(RecurringSoFar, Math.Min(_first.WorstTicks[Count], judgedTicks));
        Count++;
    }

    /// <summary>Keeps the next block of a second growth untimed (0), where it cannot change the longest operation that recurs (see the remarks).</summary>
    /// <exception cref="InvalidOperationException">A first growth's block, one that could matter, or more blocks than the room given at construction.</exception>
    public void Skip()
    {
        if (_first is null) throw new InvalidOperationException("Only a second growth leaves a block untimed: a first growth's blocks are what it is judged against.");
        if (Count == _worstTicks.Length) throw new InvalidOperationException($"A growth kept more blocks than the {_worstTicks.Length} it was sized for.");
        if (CanMatter(Count))
        {
            throw new InvalidOperationException($"Block {Count} could change the longest operation that recurs (first growth {_first.WorstTicks[Count]} ticks, recurring so far {RecurringSoFar}): it must be timed.");
        }
        (_worstTicks[Count], _firstIndex[Count]) = (0, -1);
        Count++;
        Skipped++;
    }

    /// <summary>The blocks a growth from 0 through <paramref name="checkpoints"/> (ascending) times: each stretch between two in blocks of <see cref="GrowthTrace.BlockInserts"/>, the last one short.</summary>
    public static int For(IReadOnlyList<long> checkpoints)
    {
        long blocks = 0, from = 0;
        foreach (long to in checkpoints)
        {
            if (to < from) throw new ArgumentException($"Checkpoints must ascend from 0; {to} follows {from}.", nameof(checkpoints));
            blocks += (to - from + GrowthTrace.BlockInserts - 1) / GrowthTrace.BlockInserts;
            from = to;
        }
        return checked((int)blocks);
    }

    /// <summary>
    /// The longest operation that recurs in both growths over their first <paramref name="blocks"/> blocks: for each block,
    /// the lesser of the two growths' judged slowest operation, and the largest of those. A step of the subject's own (a
    /// resize, a new segment) lands in the same block both times and stays; a stall of the machine counts only where it hit
    /// the same block of both growths, and then only by the shorter of the two.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Either growth kept fewer than <paramref name="blocks"/> blocks.</exception>
    public static RecurringWorst Recurring(ReadOnlySpan<long> first, ReadOnlySpan<long> second, int blocks)
    {
        if (blocks < 0 || blocks > first.Length || blocks > second.Length)
        {
            throw new ArgumentOutOfRangeException(nameof(blocks), blocks, $"Both growths must have timed the blocks compared: they kept {first.Length} and {second.Length}.");
        }
        var worst = new RecurringWorst(0, -1);
        for (int b = 0; b < blocks; b++)
        {
            long both = Math.Min(first[b], second[b]);
            if (worst.Block < 0 || both > worst.Ticks) worst = new RecurringWorst(both, b);
        }
        return worst;
    }

    /// <summary>The largest judged slowest operation over the first <paramref name="blocks"/> blocks kept (0 for none).</summary>
    public long WorstOver(int blocks)
    {
        long worst = 0;
        foreach (long ticks in WorstTicks[..blocks]) worst = Math.Max(worst, ticks);
        return worst;
    }

    /// <summary>Blocks timed (not skipped) among the first <paramref name="blocks"/> kept.</summary>
    public int TimedOver(int blocks)
    {
        int timed = 0;
        for (int b = 0; b < blocks; b++) timed += _firstIndex[b] >= 0 ? 1 : 0;
        return timed;
    }
}

/// <summary>The longest operation that recurs in two growths (<see cref="GrowthBlocks.Recurring"/>).</summary>
/// <param name="Ticks">The lesser of the two growths' judged slowest operation in <paramref name="Block"/>, in <see cref="LabClock"/> ticks.</param>
/// <param name="Block">The block it is in (-1: no block compared).</param>
internal readonly record struct RecurringWorst(long Ticks, int Block);

/// <summary>A <see cref="MapSubject"/> over one operations struct per thread.</summary>
internal sealed class MapSubject<TOperations>(string variant, bool concurrentReads, bool concurrentWrites, TOperations[] perThread, Action dispose)
    : MapSubject
    where TOperations : struct, IMapOperations
{
    public override string Variant => variant;
    public override bool ConcurrentReads => concurrentReads;
    public override bool ConcurrentWrites => concurrentWrites;

    public override GrowthTrace Grow(long from, long to, GrowthFloor? floor = null, GrowthBlocks? blocks = null)
    {
        ref var map = ref perThread[0];
        var worst = GrowthTrace.None(from);
        for (long blockStart = from; blockStart < to; blockStart += GrowthTrace.BlockInserts)
        {
            long blockEnd = Math.Min(to, blockStart + GrowthTrace.BlockInserts);
            if (blocks is not null && !blocks.CanMatter(blocks.Count) && floor?.NextBlockCanMatter != true)
            {
                InsertUntimed(ref map, blockStart, blockEnd, blocks, floor);
                continue;
            }
            var mark = ThreadDisturbance.Begin();
            long blockBegan = LabClock.Now;
            long blockWorst = 0, blockWorstIndex = blockStart;
            bool blockWorstSawCollection = false;
            for (long i = blockStart; i < blockEnd; i++)
            {
                var value = NativeMapWorkload.ValueOf(i);
                int collections = GC.CollectionCount(0); // outside the timed span: any collection counts generation 0
                long start = LabClock.Now;
                bool added = map.TryAdd(NativeMapWorkload.Key(i), value);
                long took = LabClock.Now - start;
                if (!added) throw Refused(i);
                if (took > blockWorst) (blockWorst, blockWorstIndex, blockWorstSawCollection) = (took, i, GC.CollectionCount(0) != collections);
            }
            long blockTook = LabClock.Now - blockBegan;
            var block = GrowthTrace.Block(blockWorst, blockWorstIndex, blockWorstSawCollection, ThreadDisturbance.End(mark, blockTook));
            worst = GrowthTrace.Worst(worst, block);
            blocks?.Add(block.WorstTicks, blockStart);
            floor?.RunBlockBeside(blockTook, disturbed: block.DisturbedBlocks > 0);
        }
        return worst;
    }

    /// <summary>
    /// A second growth's block that can change neither its longest insert that recurs nor its floor's (see
    /// <see cref="GrowthBlocks"/>'s remarks): the same inserts without an insert's timestamps (about half a timed block's
    /// time), kept untimed; the block's own time and disturbance still go to the floor, which leaves its block untimed too.
    /// Untimed, the block is shorter than a timed one: it can only shorten a later floor block that runs for the
    /// undisturbed blocks' mean, which makes the floor lower, never higher.
    /// </summary>
    private void InsertUntimed(ref TOperations map, long blockStart, long blockEnd, GrowthBlocks blocks, GrowthFloor? floor)
    {
        var mark = ThreadDisturbance.Begin();
        long blockBegan = LabClock.Now;
        for (long i = blockStart; i < blockEnd; i++)
        {
            if (!map.TryAdd(NativeMapWorkload.Key(i), NativeMapWorkload.ValueOf(i))) throw Refused(i);
        }
        long blockTook = LabClock.Now - blockBegan;
        var disturbance = ThreadDisturbance.End(mark, blockTook);
        blocks.Skip();
        floor?.RunBlockBeside(blockTook, disturbance.Disturbed);
    }

    public override void Fill(long entries)
    {
        ref var map = ref perThread[0];
        for (long i = 0; i < entries; i++)
        {
            if (!map.TryAdd(NativeMapWorkload.Key(i), NativeMapWorkload.ValueOf(i))) throw Refused(i);
        }
    }

    private InvalidOperationException Refused(long index)
        => new($"{variant}: key index {index} was refused as already present; the workload's keys are distinct.");

    public override long Lookups(int thread, LookupStream stream, long count)
    {
        ref var map = ref perThread[thread];
        long[] keys = stream.Keys;
        long cursor = CursorOf(thread);
        long mask = keys.Length - 1, sum = 0, found = 0;
        for (long i = 0; i < count; i++)
        {
            if (map.TryGetValue(keys[(cursor + i) & mask], out var value))
            {
                sum += value.A;
                found++;
            }
        }
        CursorOf(thread) = cursor + count;
        if (found != count) throw Missed(count - found, count);
        return sum;
    }

    public override long Mix(int thread, LookupStream stream, long count)
    {
        ref var map = ref perThread[thread];
        long[] keys = stream.Keys;
        long cursor = CursorOf(thread);
        long mask = keys.Length - 1, sum = 0, found = 0, reads = 0;
        for (long i = 0; i < count; i++)
        {
            long at = cursor + i;
            long key = keys[at & mask];
            if (at % 20 == 0)
            {
                map.Update(key, new MapValue(at, thread, 0));
                continue;
            }
            reads++;
            if (map.TryGetValue(key, out var value))
            {
                sum += value.A;
                found++;
            }
        }
        CursorOf(thread) = cursor + count;
        if (found != reads) throw Missed(reads - found, reads);
        return sum;
    }

    public override void Dispose() => dispose();
}

/// <summary>
/// The lookups' floor: the entries (key and value, 32 bytes) in a plain native array in insertion order, read by the
/// insertion index the stream drew, the key compared as a map would: one cache miss a lookup and no hashing or probing,
/// what no map can beat by much on the same keys. Read-only once grown (its growth is not one of the measured figures).
/// Its memory is the maps' kind: 2 MiB-aligned blocks on transparent huge pages where the system gives them
/// (<see cref="HugePageBlocks"/>), so the floor does not pay TLB misses the maps no longer pay.
/// </summary>
internal sealed unsafe class FloorSubject : MapSubject
{
    [StructLayout(LayoutKind.Sequential)]
    private struct Entry
    {
        public long Key;
        public MapValue Value;
    }

    private readonly long _capacity;
    private Entry* _entries;
    private long _count;

    public FloorSubject(long capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(capacity);
        _capacity = capacity;
        _entries = (Entry*)HugePageBlocks.Allocate(capacity * sizeof(Entry));
    }

    public override string Variant => MapSubjects.Floor;
    public override bool ConcurrentReads => true;
    public override bool ConcurrentWrites => false;

    public override GrowthTrace Grow(long from, long to, GrowthFloor? floor = null, GrowthBlocks? blocks = null)
    {
        ObjectDisposedException.ThrowIf(_entries == null, this);
        if (floor is not null || blocks is not null) throw new NotSupportedException($"{Variant} is not timed while it grows: it has no insert to set beside a floor or keep by block.");
        if (from != _count || to > _capacity || to < from)
        {
            throw new InvalidOperationException($"{Variant}: holds key indexes [0, {_count}) of {_capacity}; it grows in order only, not [{from}, {to}).");
        }
        for (long i = from; i < to; i++) _entries[i] = new Entry { Key = NativeMapWorkload.Key(i), Value = NativeMapWorkload.ValueOf(i) };
        _count = to;
        return GrowthTrace.None(from); // the floor is not timed while it grows
    }

    public override void Fill(long entries) => Grow(0, entries);

    public override long Lookups(int thread, LookupStream stream, long count)
    {
        ObjectDisposedException.ThrowIf(_entries == null, this);
        long[] keys = stream.Keys;
        int[] indexes = stream.Indexes;
        long cursor = CursorOf(thread);
        long mask = keys.Length - 1, sum = 0, found = 0;
        for (long i = 0; i < count; i++)
        {
            long at = (cursor + i) & mask;
            ulong index = (uint)indexes[at];
            if (index < (ulong)_count && _entries[index].Key == keys[at])
            {
                sum += _entries[index].Value.A;
                found++;
            }
        }
        CursorOf(thread) = cursor + count;
        if (found != count) throw Missed(count - found, count);
        return sum;
    }

    public override long Mix(int thread, LookupStream stream, long count)
        => throw new NotSupportedException($"{Variant} is read-only: it takes no part in the mix.");

    public override void Dispose()
    {
        HugePageBlocks.Free((byte*)_entries, _capacity * sizeof(Entry));
        _entries = null;
    }
}

/// <summary>The variants' names and how each is built.</summary>
internal static class MapSubjects
{
    public const string Dictionary = "Dictionary<long, T>";
    public const string Concurrent = "ConcurrentDictionary<long, T>";
    public const string Faster = "FasterKV (in memory)";
    public const string Native = "NativeMap";
    public const string ConcurrentNative = "ConcurrentNativeMap";
    public const string Floor = "native array (floor)";

    /// <summary>Every map, in display order: each is grown and weighed in a child of its own.</summary>
    public static readonly IReadOnlyList<string> All = [Dictionary, Concurrent, Faster, Native, ConcurrentNative];

    /// <summary>The maps whose longest insert is judged against the growth's floor (<see cref="GrowthFloor"/>), timed beside their growth.</summary>
    public static readonly IReadOnlyList<string> TimedAgainstFloor = [Native, ConcurrentNative];

    /// <summary>
    /// The maps whose longest insert a target reads, each grown a second time in its child for the longest insert that
    /// recurs (<see cref="GrowthBlocks"/>): both Manaloc maps, and Dictionary, the figure they are judged against, by the
    /// same rule. ConcurrentDictionary's and FasterKV's longest inserts are charted, read by no target: one growth each.
    /// </summary>
    public static readonly IReadOnlyList<string> GrownTwice = [Dictionary, Native, ConcurrentNative];

    /// <summary>The maps and the lookups' floor, in display order.</summary>
    public static readonly IReadOnlyList<string> Reported = [.. All, Floor];

    /// <summary>A new, empty map of <paramref name="variant"/>, sized by nothing but its defaults (FASTER and the floor: for <paramref name="entries"/>).</summary>
    /// <exception cref="ArgumentException">An unknown variant.</exception>
    public static MapSubject Create(string variant, long entries) => variant switch
    {
        Dictionary => CreateDictionary(),
        Concurrent => CreateConcurrent(),
        Faster => FasterSubject.Create(entries),
        Native => CreateNative(),
        ConcurrentNative => CreateConcurrentNative(),
        Floor => new FloorSubject(entries),
        _ => throw new ArgumentException($"Unknown native-map variant '{variant}'; known: {string.Join(", ", Reported)}.", nameof(variant)),
    };

    private static MapSubject CreateDictionary()
    {
        var map = new Dictionary<long, MapValue>();
        return new MapSubject<DictionaryOperations>(Dictionary, concurrentReads: true, concurrentWrites: false, [new(map), new(map)], () => map.Clear());
    }

    private static MapSubject CreateConcurrent()
    {
        var map = new ConcurrentDictionary<long, MapValue>();
        return new MapSubject<ConcurrentOperations>(Concurrent, concurrentReads: true, concurrentWrites: true, [new(map), new(map)], () => map.Clear());
    }

    private static NativeMapOptions<long> Options => new() { Name = "lab.native-map" };

    private static MapSubject CreateNative()
    {
        var map = new NativeMap<long, MapValue>(Options);
        // Concurrent reads while nothing writes are safe, as Dictionary's (its documented contract).
        return new MapSubject<NativeOperations>(Native, concurrentReads: true, concurrentWrites: false, [new(map), new(map)], map.Dispose);
    }

    private static MapSubject CreateConcurrentNative()
    {
        var map = new ConcurrentNativeMap<long, MapValue>(Options);
        return new MapSubject<ConcurrentNativeOperations>(ConcurrentNative, concurrentReads: true, concurrentWrites: true, [new(map), new(map)], map.Dispose);
    }

    private readonly struct NativeOperations(NativeMap<long, MapValue> map) : IMapOperations
    {
        public bool TryAdd(long key, in MapValue value) => map.TryAdd(key, value);
        public bool TryGetValue(long key, out MapValue value) => map.TryGetValue(key, out value);
        public void Update(long key, in MapValue value) => map.GetValueRefOrNullRef(key) = value;
    }

    private readonly struct ConcurrentNativeOperations(ConcurrentNativeMap<long, MapValue> map) : IMapOperations
    {
        public bool TryAdd(long key, in MapValue value) => map.TryAdd(key, value);
        public bool TryGetValue(long key, out MapValue value) => map.TryGetValue(key, out value);
        public void Update(long key, in MapValue value) => map[key] = value;
    }

    private readonly struct DictionaryOperations(Dictionary<long, MapValue> map) : IMapOperations
    {
        public bool TryAdd(long key, in MapValue value) => map.TryAdd(key, value);
        public bool TryGetValue(long key, out MapValue value) => map.TryGetValue(key, out value);
        public void Update(long key, in MapValue value) => map[key] = value;
    }

    private readonly struct ConcurrentOperations(ConcurrentDictionary<long, MapValue> map) : IMapOperations
    {
        public bool TryAdd(long key, in MapValue value) => map.TryAdd(key, value);
        public bool TryGetValue(long key, out MapValue value) => map.TryGetValue(key, out value);
        public void Update(long key, in MapValue value) => map[key] = value;
    }
}

/// <summary>
/// FASTER's <see cref="FasterKV{Key, Value}"/> kept wholly in memory: a null log device, a log memory large enough for
/// every record (a record is an 8-byte header, the key and the value: 40 bytes) with a quarter to spare, 4 MiB pages
/// allocated as the log grows, and a hash index of one 64-byte bucket (seven entries) per four keys, fixed at
/// construction as FASTER's index is. One session per thread.
/// </summary>
internal static class FasterSubject
{
    private const int RecordBytes = 40;
    private const int PageSizeBits = 22;

    public static MapSubject Create(long entries)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entries);
        long logBytes = Math.Max(1L << PageSizeBits, (long)BitOperations.RoundUpToPowerOf2((ulong)(entries * RecordBytes * 5 / 4)));
        long buckets = Math.Max(64, (long)BitOperations.RoundUpToPowerOf2((ulong)Math.Max(1, entries / 4)));
        var device = new NullDevice();
        var store = new FasterKV<long, MapValue>(buckets, new LogSettings
        {
            LogDevice = device,
            PageSizeBits = PageSizeBits,
            MemorySizeBits = BitOperations.Log2((ulong)logBytes),
        });
        var sessions = new Session[MapSubject.MaxThreads];
        for (int t = 0; t < sessions.Length; t++) sessions[t] = store.For(new SimpleFunctions<long, MapValue>()).NewSession<SimpleFunctions<long, MapValue>>();
        var operations = sessions.Select(s => new FasterOperations(s)).ToArray();
        return new MapSubject<FasterOperations>(MapSubjects.Faster, concurrentReads: true, concurrentWrites: true, operations, () =>
        {
            foreach (var s in sessions) s.Dispose();
            store.Dispose();
            device.Dispose();
        });
    }

    private readonly struct FasterOperations(Session session) : IMapOperations
    {
        public bool TryAdd(long key, in MapValue value)
        {
            // Upsert of a key the caller knows is absent: FASTER has no add-if-absent that does not read first.
            var v = value;
            var status = session.Upsert(ref key, ref v);
            return !status.IsFaulted && !status.IsPending;
        }

        public bool TryGetValue(long key, out MapValue value)
        {
            value = default;
            var status = session.Read(ref key, ref value);
            if (status.IsPending) throw new InvalidOperationException("FasterKV went to its (null) device for a read: the log is sized to keep every record in memory.");
            return status.Found;
        }

        public void Update(long key, in MapValue value)
        {
            var v = value;
            session.Upsert(ref key, ref v);
        }
    }
}
