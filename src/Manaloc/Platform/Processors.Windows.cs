using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>The Windows reading: the process's processor groups and masks, and the cache descriptors.</summary>
public sealed partial class Processors
{
    private static unsafe Processors ReadWindows()
    {
        var problems = new List<string>();
        int? installed = null;
        int[]? affinity = null;
        try
        {
            uint all = WindowsNative.GetActiveProcessorCount(WindowsNative.AllProcessorGroups);
            installed = all > 0 ? (int)all : null;
            affinity = ReadWindowsAffinity(problems);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            problems.Add($"kernel32 affinity functions are not available ({e.GetType().Name}); affinity unknown.");
        }

        int? line = null;
        try
        {
            uint length = 0;
            WindowsNative.GetLogicalProcessorInformation(null, ref length);
            int count = (int)(length / (uint)sizeof(WindowsNative.LogicalProcessorInformation));
            if (count > 0)
            {
                var buffer = new WindowsNative.LogicalProcessorInformation[count];
                fixed (WindowsNative.LogicalProcessorInformation* p = buffer)
                {
                    if (WindowsNative.GetLogicalProcessorInformation(p, ref length))
                    {
                        foreach (var info in buffer.AsSpan(0, (int)(length / (uint)sizeof(WindowsNative.LogicalProcessorInformation))))
                        {
                            if (info.Relationship == WindowsNative.RelationCache && info.Cache.LineSize is > 0 and <= 4096)
                            {
                                line = Math.Max(line ?? 0, info.Cache.LineSize);
                            }
                        }
                    }
                }
            }
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            problems.Add($"GetLogicalProcessorInformation is not available ({e.GetType().Name}); cache line size defaulted.");
        }

        int lineSize = line ?? 64;
        return new Processors
        {
            EnvironmentProcessorCount = Environment.ProcessorCount,
            InstalledCount = installed,
            AffinityProcessors = affinity,
            CacheLineSize = lineSize,
            CacheLineSizeReported = line is not null,
            FalseSharingPadding = Padding(lineSize),
            Problems = problems.ToArray(),
        };
    }

    /// <summary>
    /// One group: the process mask, numbered group * 64 + bit. Several groups (the process has
    /// threads in more than one): the process mask is not defined, so every active processor of
    /// those groups counts.
    /// </summary>
    private static unsafe int[]? ReadWindowsAffinity(List<string> problems)
    {
        ushort groupCount = 0;
        WindowsNative.GetProcessGroupAffinity(WindowsNative.CurrentProcess, ref groupCount, null);
        if (groupCount == 0)
        {
            problems.Add($"GetProcessGroupAffinity failed (error {Marshal.GetLastPInvokeError()}); affinity unknown.");
            return null;
        }
        var groups = new ushort[groupCount];
        fixed (ushort* p = groups)
        {
            if (!WindowsNative.GetProcessGroupAffinity(WindowsNative.CurrentProcess, ref groupCount, p))
            {
                problems.Add($"GetProcessGroupAffinity failed (error {Marshal.GetLastPInvokeError()}); affinity unknown.");
                return null;
            }
        }
        if (groupCount == 1)
        {
            if (!WindowsNative.GetProcessAffinityMask(WindowsNative.CurrentProcess, out nuint mask, out _) || mask == 0)
            {
                problems.Add($"GetProcessAffinityMask failed (error {Marshal.GetLastPInvokeError()}); affinity unknown.");
                return null;
            }
            return AffinityMask.ToProcessors((ulong)mask, groups[0]);
        }
        var result = new List<int>();
        foreach (ushort group in groups.AsSpan(0, groupCount))
        {
            uint active = WindowsNative.GetActiveProcessorCount(group);
            for (int bit = 0; bit < active && bit < 64; bit++) result.Add((group * 64) + bit);
        }
        return result.ToArray();
    }
}
