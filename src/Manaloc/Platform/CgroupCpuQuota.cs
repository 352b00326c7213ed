using System.Globalization;

namespace Manaloc.Platform;

/// <summary>What the cgroup CPU controller allows this process: a quota in processors, or none.</summary>
/// <param name="Processors">Quota divided by period, e.g. 1.5; null when no level sets a limit.</param>
/// <param name="Source">The file that set the tightest limit; null when none did.</param>
/// <param name="Version"><c>v1</c>, <c>v2</c>, or null when no cgroup CPU controller was found.</param>
/// <param name="Directory">The process's own cgroup directory that was read, or null.</param>
internal readonly record struct CgroupQuota(double? Processors, string? Source, string? Version, string? Directory);

/// <summary>
/// Finds this process's cgroup CPU controller under a root directory (<c>/</c> for the real
/// system, a temporary directory in tests) and reads the tightest CPU quota on the way from its
/// cgroup up to the controller's mount point.
/// </summary>
/// <remarks>
/// <para>
/// Where: <c>proc/self/cgroup</c> names the process's cgroup per hierarchy (a v1 line whose
/// controller list holds <c>cpu</c> wins over the v2 line <c>0::path</c>, as the kernel routes the
/// cpu controller to at most one of them); <c>proc/self/mountinfo</c> maps it to a directory. When
/// either file is missing, the usual mount points under <c>sys/fs/cgroup</c> are probed with the
/// cgroup path <c>/</c>.
/// </para>
/// <para>
/// What: v2 <c>cpu.max</c> holds <c>"$QUOTA $PERIOD"</c> or <c>"max $PERIOD"</c>; v1 holds
/// <c>cpu.cfs_quota_us</c> (-1: no limit) and <c>cpu.cfs_period_us</c>. A parent's limit binds its
/// children, so every level up to the mount point is read and the smallest quota wins.
/// </para>
/// <para>
/// Failure: a missing or unreadable file means "no limit at that level" and never throws;
/// malformed content is added to the problems list and that level is skipped, never guessed.
/// Stateless; safe from any thread.
/// </para>
/// </remarks>
internal static class CgroupCpuQuota
{
    private readonly record struct Mount(string Root, string MountPoint, string FileSystem, string[] SuperOptions);

    /// <summary>Reads the quota under <paramref name="root"/>, adding anything malformed to <paramref name="problems"/>.</summary>
    public static CgroupQuota Read(string root, List<string> problems)
    {
        var (version, directory, mountPoint) = Locate(root, problems);
        if (version is null || directory is null || mountPoint is null)
        {
            return new(null, null, null, null);
        }
        double? best = null;
        string? source = null;
        string? current = directory;
        string stop = Path.TrimEndingDirectorySeparator(mountPoint);
        // Walk up from the process's cgroup to the mount point (the hierarchy's root), inclusive.
        for (int depth = 0; current is not null && depth < 64; depth++)
        {
            var (quota, file) = version == "v2" ? ReadV2(current, problems) : ReadV1(current, problems);
            if (quota is double q && (best is null || q < best))
            {
                best = q;
                source = file;
            }
            string trimmed = Path.TrimEndingDirectorySeparator(current);
            if (string.Equals(trimmed, stop, StringComparison.Ordinal) || trimmed.Length <= stop.Length)
            {
                break;
            }
            current = Path.GetDirectoryName(trimmed);
        }
        return new(best, source, version, directory);
    }

    /// <summary>Parses v2 <c>cpu.max</c> content. Returns (quota in processors or null for "max", ok).</summary>
    public static (double? Quota, bool Ok) ParseCpuMax(string content)
    {
        string[] parts = content.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        if (parts.Length is < 1 or > 2)
        {
            return (null, false);
        }
        long period = 100_000;
        if (parts.Length == 2 && !TryParsePositive(parts[1], out period))
        {
            return (null, false);
        }
        if (parts[0] == "max")
        {
            return (null, true);
        }
        // The kernel always prints the period; a lone number is not something it writes.
        if (parts.Length != 2 || !TryParsePositive(parts[0], out long quota))
        {
            return (null, false);
        }
        return ((double)quota / period, true);
    }

    /// <summary>Parses v1 quota and period content. Returns (quota in processors or null for -1, ok).</summary>
    public static (double? Quota, bool Ok) ParseCfs(string quotaContent, string? periodContent)
    {
        string quotaText = quotaContent.Trim();
        if (quotaText == "-1")
        {
            return (null, true);
        }
        if (!TryParsePositive(quotaText, out long quota) || periodContent is null || !TryParsePositive(periodContent.Trim(), out long period))
        {
            return (null, false);
        }
        return ((double)quota / period, true);
    }

    private static (double? Quota, string? File) ReadV2(string directory, List<string> problems)
    {
        string file = Path.Combine(directory, "cpu.max");
        if (TryReadText(file) is not { } content)
        {
            return (null, null);
        }
        var (quota, ok) = ParseCpuMax(content);
        if (!ok)
        {
            problems.Add($"{file}: '{Shorten(content)}' is not '<quota> <period>' or 'max <period>'; ignored (no limit assumed at this level).");
        }
        return (quota, file);
    }

    private static (double? Quota, string? File) ReadV1(string directory, List<string> problems)
    {
        string quotaFile = Path.Combine(directory, "cpu.cfs_quota_us");
        if (TryReadText(quotaFile) is not { } quotaContent)
        {
            return (null, null);
        }
        string periodFile = Path.Combine(directory, "cpu.cfs_period_us");
        string? periodContent = TryReadText(periodFile);
        var (quota, ok) = ParseCfs(quotaContent, periodContent);
        if (!ok)
        {
            problems.Add(periodContent is null
                ? $"{quotaFile}: quota '{Shorten(quotaContent)}' without a readable {periodFile}; ignored."
                : $"{quotaFile}, {periodFile}: '{Shorten(quotaContent)}' / '{Shorten(periodContent)}' is not -1 or a positive quota over a positive period; ignored.");
        }
        return (quota, quotaFile);
    }

    private static (string? Version, string? Directory, string? MountPoint) Locate(string root, List<string> problems)
    {
        var lines = TryReadLines(Path.Combine(root, "proc", "self", "cgroup"));
        var mounts = ReadMounts(root);
        string? v1Path = null, v2Path = null;
        foreach (string line in lines ?? [])
        {
            // hierarchy-id:controller-list:path; the path itself may contain ':'.
            string[] fields = line.Split(':', 3);
            if (fields.Length != 3) continue;
            if (fields[0] == "0" && fields[1].Length == 0) v2Path = fields[2];
            else if (fields[1].Split(',').Contains("cpu")) v1Path = fields[2];
        }
        if (lines is null)
        {
            v1Path = v2Path = "/";
        }
        if (v1Path is not null)
        {
            var mount = mounts.FirstOrDefault(m => m.FileSystem == "cgroup" && m.SuperOptions.Contains("cpu"));
            string? mountPoint = mount.MountPoint is null
                ? FirstExisting(Path.Combine(root, "sys", "fs", "cgroup", "cpu,cpuacct"), Path.Combine(root, "sys", "fs", "cgroup", "cpu"))
                : Path.Join(root, mount.MountPoint);
            if (mountPoint is not null && (lines is not null || File.Exists(Path.Combine(mountPoint, "cpu.cfs_quota_us"))))
            {
                return ("v1", MapPath(mountPoint, mount.Root ?? "/", v1Path, problems), mountPoint);
            }
        }
        if (v2Path is not null)
        {
            var mount = mounts.FirstOrDefault(m => m.FileSystem == "cgroup2");
            string mountPoint = mount.MountPoint is null ? Path.Combine(root, "sys", "fs", "cgroup") : Path.Join(root, mount.MountPoint);
            if (Directory.Exists(mountPoint))
            {
                return ("v2", MapPath(mountPoint, mount.Root ?? "/", v2Path, problems), mountPoint);
            }
        }
        return (null, null, null);
    }

    /// <summary>The directory of cgroup <paramref name="path"/> in a hierarchy whose <paramref name="mountRoot"/> is mounted at <paramref name="mountPoint"/>.</summary>
    private static string MapPath(string mountPoint, string mountRoot, string path, List<string> problems)
    {
        string relative;
        if (mountRoot == "/")
        {
            relative = path;
        }
        else if (path == mountRoot || path.StartsWith(mountRoot.TrimEnd('/') + "/", StringComparison.Ordinal))
        {
            relative = path[mountRoot.TrimEnd('/').Length..];
        }
        else
        {
            problems.Add($"cgroup path '{path}' lies outside the mounted root '{mountRoot}'; read {mountPoint} itself.");
            relative = "/";
        }
        string joined = Path.Join(mountPoint, relative.TrimStart('/'));
        return Path.TrimEndingDirectorySeparator(joined);
    }

    private static List<Mount> ReadMounts(string root)
    {
        var result = new List<Mount>();
        foreach (string line in TryReadLines(Path.Combine(root, "proc", "self", "mountinfo")) ?? [])
        {
            // id parent major:minor root mount-point options [optional…] - fstype source super-options
            int separator = line.IndexOf(" - ", StringComparison.Ordinal);
            if (separator < 0) continue;
            string[] left = line[..separator].Split(' ');
            string[] right = line[(separator + 3)..].Split(' ');
            if (left.Length < 5 || right.Length < 3) continue;
            result.Add(new Mount(Unescape(left[3]), Unescape(left[4]), right[0], right[2].Split(',')));
        }
        return result;
    }

    /// <summary>mountinfo escapes space, tab, newline and backslash as \ooo octal.</summary>
    private static string Unescape(string field)
    {
        if (!field.Contains('\\', StringComparison.Ordinal)) return field;
        var text = new System.Text.StringBuilder(field.Length);
        for (int i = 0; i < field.Length; i++)
        {
            if (field[i] == '\\' && i + 3 < field.Length && IsOctal(field[i + 1]) && IsOctal(field[i + 2]) && IsOctal(field[i + 3]))
            {
                text.Append((char)Convert.ToInt32(field.Substring(i + 1, 3), 8));
                i += 3;
            }
            else
            {
                text.Append(field[i]);
            }
        }
        return text.ToString();
    }

    private static bool IsOctal(char c) => c is >= '0' and <= '7';

    private static string? FirstExisting(params string[] directories) => directories.FirstOrDefault(Directory.Exists);

    private static bool TryParsePositive(string text, out long value)
        => long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value) && value > 0;

    private static string Shorten(string content)
    {
        string oneLine = content.Trim().ReplaceLineEndings(" ");
        return oneLine.Length <= 60 ? oneLine : oneLine[..60] + "…";
    }

    /// <summary>The file's text, or null when it is missing or unreadable (no limit, never an exception).</summary>
    internal static string? TryReadText(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.Security.SecurityException or NotSupportedException or ArgumentException)
        {
            return null;
        }
    }

    private static string[]? TryReadLines(string path)
        => TryReadText(path)?.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
}
