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
            long cleared = Smaps.HugePageAdvisedResidentKilobytes();
            Assert.True(cleared - before <= 1024, $"{cleared - before} KiB still resident in huge-page blocks after Clear");
            for (long k = 0; k < Entries; k++) map.Add(k);
            Assert.True(map.Contains(Entries - 1));
        }
        finally
        {
            map.Dispose();
        }
        long disposed = Smaps.HugePageAdvisedResidentKilobytes();
        Assert.True(disposed - before <= 1024, $"{disposed - before} KiB still resident in huge-page blocks after Dispose");
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
