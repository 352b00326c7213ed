using Manaloc.Collections;
using Manaloc.Tests.Memory;
using Manaloc.Tests.Platform;

namespace Manaloc.Tests.Collections;

/// <summary>A large table's segments on huge-page blocks, and their memory given back. Runs alone: the figures are the
/// whole process's resident memory in huge-page-advised mappings, which another test's map would change.</summary>
[Collection(nameof(ProcessMemoryCollection))]
public sealed class NativeMapHugePageTests
{
    private const long Entries = 500_000;

    [LinuxFact]
    public void NativeMap_sits_on_huge_page_blocks_and_Clear_and_Dispose_give_them_back() => FillClearDispose(concurrent: false);

    [LinuxFact]
    public void ConcurrentNativeMap_sits_on_huge_page_blocks_and_Clear_and_Dispose_give_them_back() => FillClearDispose(concurrent: true);

    private static void FillClearDispose(bool concurrent)
    {
        long before = Smaps.HugePageAdvisedResidentKilobytes();
        var map = new MapUnderTest(concurrent);
        try
        {
            for (long k = 0; k < Entries; k++) map.Add(k);
            // About 24 MB of segments at 500K entries, all but the first 2 MiB carved from huge-page blocks, except a block
            // the growth thread had not made ready in time (on a loaded machine its batch-class thread can be late): the
            // insert that needed it mapped that block on base pages. Half of them on huge pages shows the map uses them.
            long filled = Smaps.HugePageAdvisedResidentKilobytes();
            Assert.True(filled - before >= 10 * 1024, $"{filled - before} KiB resident in huge-page blocks at {Entries} entries");
            map.Clear();
            long cleared = SettledHugePageKilobytes(before);
            Assert.True(cleared - before <= 1024, $"{cleared - before} KiB still resident in huge-page blocks after Clear");
            for (long k = 0; k < Entries; k++) map.Add(k);
            Assert.True(map.Contains(Entries - 1));
        }
        finally
        {
            map.Dispose();
        }
        long disposed = SettledHugePageKilobytes(before);
        Assert.True(disposed - before <= 1024, $"{disposed - before} KiB still resident in huge-page blocks after Dispose");
    }

    /// <summary>The huge-page-advised resident kilobytes once they are back within 1 MiB of <paramref name="before"/>, or
    /// after 5 s: a work item making the next block ready may still hold one for a moment after Clear or Dispose, and
    /// frees it as soon as it sees the table freed.</summary>
    private static long SettledHugePageKilobytes(long before)
    {
        long kilobytes = Smaps.HugePageAdvisedResidentKilobytes();
        for (var waited = System.Diagnostics.Stopwatch.StartNew(); kilobytes - before > 1024 && waited.Elapsed < TimeSpan.FromSeconds(5); kilobytes = Smaps.HugePageAdvisedResidentKilobytes())
        {
            Thread.Sleep(10);
        }
        return kilobytes;
    }

    [Fact]
    public void A_block_made_ready_after_Dispose_is_freed_by_its_work_item()
    {
        // The work item is held between making its block ready and offering it until the map is disposed: the offer then
        // comes after Free, and the work item must take the block back and free it, so the table's bytes end at 0.
        using var holding = new ManualResetEventSlim();
        using var disposed = new ManualResetEventSlim();
        var map = new NativeMap<long, SpareProbe>();
        var table = map.Table;
        NativeHashTable<long, SpareProbe>.TestHookBeforeSpareOffer = () =>
        {
            holding.Set();
            disposed.Wait(TimeSpan.FromSeconds(10));
        };
        try
        {
            for (long k = 0; !table.IsPreparingSpareBlock; k++) map[k] = new SpareProbe(k);
            Assert.True(holding.Wait(TimeSpan.FromSeconds(10)), "the work item never made its block ready");
            map.Dispose();
            disposed.Set();
            Assert.True(SpinWait.SpinUntil(() => !table.IsPreparingSpareBlock, TimeSpan.FromSeconds(10)), "the work item never finished");
            Assert.Equal(0, table.SpareBlockBytes);
            Assert.Equal(0, table.NativeBytes);
        }
        finally
        {
            NativeHashTable<long, SpareProbe>.TestHookBeforeSpareOffer = null;
            disposed.Set();
            map.Dispose();
        }
    }

    [Fact]
    public void A_block_made_ready_is_freed_however_Dispose_races_it()
    {
        // Each map grows until its work item is making the next block ready and is disposed at once: Dispose and the
        // work item race (free-running, no hook). Whoever loses must free the block: a table's bytes end at 0.
        for (int round = 0; round < 20; round++)
        {
            var map = new NativeMap<long, Payload>();
            var table = map.Table;
            for (long k = 0; !table.IsPreparingSpareBlock; k++) map[k] = Payload.Of(k);
            map.Dispose();
            Assert.True(SpinWait.SpinUntil(() => !table.IsPreparingSpareBlock, TimeSpan.FromSeconds(10)), "the work item never finished");
            Assert.Equal(0, table.NativeBytes);
        }
    }

    [Fact]
    public void The_insert_that_starts_a_segment_does_not_ask_for_the_next_block_the_insert_after_it_does()
    {
        // The wake-up of the growth thread (tens of microseconds) must not land in the insert that also maps and faults in
        // a segment: the first segment that wants the next block only marks it wanted, and the next insert (one that does
        // not split: a split raises the threshold by about 12 entries) makes the request.
        var map = new NativeMap<long, Payload>();
        var table = map.Table;
        try
        {
            int wanting = Math.Max(1, NativeHashTable<long, Payload>.FirstHugeSegment - NativeHashTable<long, Payload>.SpareLeadSegments);
            long k = 0;
            for (; table.SegmentCount <= wanting; k++)
            {
                Assert.False(table.IsPreparingSpareBlock, $"a block was asked for at {table.SegmentCount} segments");
                map[k] = Payload.Of(k);
            }
            long splits = table.Splits;
            Assert.False(table.IsPreparingSpareBlock || table.SpareBlockBytes > 0, "the insert that started the segment asked for the block");
            map[k] = Payload.Of(k);
            Assert.Equal(splits, table.Splits);
            Assert.True(table.IsPreparingSpareBlock || table.SpareBlockBytes > 0, "the insert after it did not ask for the block");
        }
        finally
        {
            map.Dispose();
        }
        Assert.True(SpinWait.SpinUntil(() => !table.IsPreparingSpareBlock, TimeSpan.FromSeconds(10)), "the growth thread never finished");
        Assert.Equal(0, table.NativeBytes);
    }

    [LinuxFact]
    public void With_no_block_ready_inserts_go_on_on_a_base_page_block_and_Dispose_gives_it_back()
    {
        // The work item is held before it offers its block, so none is ready when the table starts its first huge segment:
        // the insert that starts it must not fault a 2 MiB huge page itself (milliseconds), but map a block on base pages,
        // faulted in page by page as its segments fill. Every entry stays found; Dispose frees both blocks.
        using var release = new ManualResetEventSlim();
        NativeHashTable<long, HeldProbe>.TestHookBeforeSpareOffer = () => release.Wait(TimeSpan.FromSeconds(30));
        var map = new NativeMap<long, HeldProbe>();
        var table = map.Table;
        try
        {
            int beyond = NativeHashTable<long, HeldProbe>.FirstHugeSegment + 2;
            long added = 0;
            for (; table.SegmentCount <= beyond; added++) map[added] = new HeldProbe(added);
            Assert.True(table.IsPreparingSpareBlock, "the held work item finished");
            Assert.Equal(0, table.SpareBlockBytes);
            string[]? mapping = Smaps.Holding((nuint)table.SegmentAt(beyond));
            Assert.NotNull(mapping);
            Assert.DoesNotContain(" hg", " " + Smaps.Field(mapping, "VmFlags:"), StringComparison.Ordinal);
            for (long k = 0; k < added; k++) Assert.Equal(k, map[k].Value);
        }
        finally
        {
            release.Set();
            NativeHashTable<long, HeldProbe>.TestHookBeforeSpareOffer = null;
            map.Dispose();
        }
        Assert.True(SpinWait.SpinUntil(() => !table.IsPreparingSpareBlock, TimeSpan.FromSeconds(10)), "the work item never finished");
        Assert.Equal(0, table.NativeBytes);
    }

    /// <summary>The value of <see cref="With_no_block_ready_inserts_go_on_on_a_base_page_block_and_Dispose_gives_it_back"/>'s map: a test hook of its own.</summary>
    private readonly record struct HeldProbe(long Value);

    /// <summary>A value type of this test's own, so the test hook of its table's instantiation touches no other test's maps.</summary>
    private readonly record struct SpareProbe(long Value);

    /// <summary>Either map behind the three members the test needs.</summary>
    private sealed class MapUnderTest(bool concurrent) : IDisposable
    {
        private readonly NativeMap<long, Payload>? _map = concurrent ? null : new NativeMap<long, Payload>();
        private readonly ConcurrentNativeMap<long, Payload>? _concurrent = concurrent ? new ConcurrentNativeMap<long, Payload>() : null;

        public void Add(long key)
        {
            if (_map is not null) _map[key] = Payload.Of(key);
            else _concurrent![key] = Payload.Of(key);
        }

        public bool Contains(long key) => _map?.ContainsKey(key) ?? _concurrent!.ContainsKey(key);

        public void Clear()
        {
            _map?.Clear();
            _concurrent?.Clear();
        }

        public void Dispose()
        {
            _map?.Dispose();
            _concurrent?.Dispose();
        }
    }
}
