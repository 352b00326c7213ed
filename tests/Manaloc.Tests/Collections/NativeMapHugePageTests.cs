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
            // About 24 MB of segments at 500K entries, all but the first 2 MiB carved from huge-page blocks.
            long filled = Smaps.HugePageAdvisedResidentKilobytes();
            Assert.True(filled - before >= 16 * 1024, $"{filled - before} KiB resident in huge-page blocks at {Entries} entries");
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
    public void A_block_made_ready_off_the_writer_is_freed_however_Dispose_races_it()
    {
        // Each map grows just past its first huge-page block, so a work item is making the next one ready, and is disposed
        // at once: Dispose and the work item race. Whoever loses must free the block: a table's bytes end at 0.
        int entriesPastFirstBlock = 0;
        for (int round = 0; round < 40; round++)
        {
            var map = new NativeMap<long, Payload>();
            var table = map.Table;
            if (entriesPastFirstBlock == 0)
            {
                while (table.NativeBytes < 3L * Manaloc.Platform.HugePageBlocks.GranuleBytes) map[entriesPastFirstBlock++] = Payload.Of(entriesPastFirstBlock);
            }
            else
            {
                for (long k = 0; k < entriesPastFirstBlock; k++) map[k] = Payload.Of(k);
            }
            map.Dispose();
            Assert.True(SpinWait.SpinUntil(() => !table.IsPreparingSpareBlock, TimeSpan.FromSeconds(10)), "the work item never finished");
            Assert.Equal(0, table.NativeBytes);
        }
    }

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
