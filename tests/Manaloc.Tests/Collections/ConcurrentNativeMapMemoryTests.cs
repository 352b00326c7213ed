using System.Diagnostics;
using Manaloc.Collections;
using Manaloc.Tests.Memory;
using Manaloc.Tests.Platform;

namespace Manaloc.Tests.Collections;

/// <summary>Clear and Dispose make the map's pages non-resident at once, though a released table stays mapped for racing
/// readers until its finalizer. Runs alone: the resident figure is the whole process's.</summary>
[Collection(nameof(ProcessMemoryCollection))]
public sealed class ConcurrentNativeMapMemoryTests
{
    private static long ResidentBytes()
    {
        using var process = Process.GetCurrentProcess();
        return process.WorkingSet64; // VmRSS on Linux
    }

    [LinuxFact]
    public void Clear_gives_the_pages_back_at_once() => GivesThePagesBack(dispose: false);

    [LinuxFact]
    public void Dispose_gives_the_pages_back_at_once() => GivesThePagesBack(dispose: true);

    private static void GivesThePagesBack(bool dispose)
    {
        var map = new ConcurrentNativeMap<long, Payload>();
        for (long k = 1; k <= 1_000_000; k++) map[k] = Payload.Of(k);
        long held = map.NativeBytes;
        GC.Collect();
        long full = ResidentBytes();
        if (dispose) map.Dispose();
        else map.Clear();
        long after = ResidentBytes();
        // The table's bytes (about 50 MB) leave the resident set in the call, not at the next collection.
        Assert.True(full - after > held / 2, $"resident {full} before, {after} after; the map held {held} native bytes");
        if (!dispose)
        {
            Assert.Equal(0, map.Count);
            map.Dispose();
        }
    }
}
