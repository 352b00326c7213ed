using System.Globalization;

namespace Manaloc.Platform;

/// <summary>The Linux reading: files under the probe's root and the probe's affinity mask.</summary>
public sealed partial class Processors
{
    /// <summary>Reads the figures from <paramref name="probe"/>: the Linux files under its root and its mask.</summary>
    internal static Processors Read(ProcessorProbe probe)
    {
        ArgumentNullException.ThrowIfNull(probe);
        var problems = new List<string>();
        if (probe.AffinityProblem is not null) problems.Add(probe.AffinityProblem);

        int[]? affinity = probe.AffinityMask is null ? null : AffinityMask.ToProcessors(probe.AffinityMask);
        if (affinity is { Length: 0 })
        {
            problems.Add("The affinity mask is empty; affinity unknown.");
            affinity = null;
        }

        int? installed = null;
        string onlineFile = Path.Combine(probe.Root, "sys", "devices", "system", "cpu", "online");
        if (CgroupCpuQuota.TryReadText(onlineFile) is { } online)
        {
            int[]? cpus = AffinityMask.ParseList(online);
            if (cpus is { Length: > 0 }) installed = cpus.Length;
            else problems.Add($"{onlineFile}: '{online.Trim()}' is not a processor list; ignored.");
        }

        var quota = CgroupCpuQuota.Read(probe.Root, problems);
        var (line, reported) = ReadLinuxCacheLine(probe.Root, problems);
        int lineSize = line ?? 64;
        return new Processors
        {
            EnvironmentProcessorCount = probe.EnvironmentProcessorCount,
            InstalledCount = installed,
            AffinityProcessors = affinity,
            CpuQuota = quota.Processors,
            CpuQuotaSource = quota.Source,
            CgroupVersion = quota.Version,
            CacheLineSize = lineSize,
            CacheLineSizeReported = reported,
            FalseSharingPadding = Padding(lineSize, probe.Architecture),
            Problems = problems.ToArray(),
        };
    }

    /// <summary>
    /// The largest coherency line size over cpu0's caches (they normally agree; the largest is the
    /// safe one to pad by), or null when none is reported.
    /// </summary>
    private static (int? Size, bool Reported) ReadLinuxCacheLine(string root, List<string> problems)
    {
        string cacheDir = Path.Combine(root, "sys", "devices", "system", "cpu", "cpu0", "cache");
        string[] indexes;
        try
        {
            indexes = Directory.Exists(cacheDir) ? Directory.GetDirectories(cacheDir, "index*") : [];
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return (null, false);
        }
        int? largest = null;
        foreach (string index in indexes.Order(StringComparer.Ordinal))
        {
            string file = Path.Combine(index, "coherency_line_size");
            if (CgroupCpuQuota.TryReadText(file) is not { } text) continue;
            if (int.TryParse(text.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out int size) && size is >= 8 and <= 4096 && int.IsPow2(size))
            {
                largest = Math.Max(largest ?? 0, size);
            }
            else
            {
                problems.Add($"{file}: '{text.Trim()}' is not a power-of-two line size; ignored.");
            }
        }
        return (largest, largest is not null);
    }
}
