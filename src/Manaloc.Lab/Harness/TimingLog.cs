using System.Diagnostics;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Where a run's child processes spend their time outside the experiment's work, for whoever tunes the run's length:
/// with <see cref="Variable"/> naming a file, every child writes one <see cref="Marker"/> line to stderr as its entry
/// point is reached (its wall time since its process started and its CPU so far), one as its result is ready and one
/// when its result line is written, and
/// the parent appends a tab-separated row per child to that file. Unset (always, in a report's run), nothing is written.
/// </summary>
internal static class TimingLog
{
    /// <summary>The environment variable naming the file to append to.</summary>
    public const string Variable = "MANALOC_LAB_CHILD_TIMES";

    /// <summary>Prefix of the child's timing lines on stderr.</summary>
    public const string Marker = "##manaloc-child-timing##";

    private static readonly object Gate = new();

    /// <summary>True when the timings are asked for.</summary>
    public static bool Enabled => Environment.GetEnvironmentVariable(Variable) is { Length: > 0 };

    /// <summary>In the child: writes its wall time since its process started and its CPU so far, labelled.</summary>
    public static void WriteChildMark(TextWriter stderr, string label)
    {
        using var self = Process.GetCurrentProcess();
        double wall = (DateTime.Now - self.StartTime).TotalSeconds;
        double cpu = self.TotalProcessorTime.TotalSeconds;
        stderr.WriteLine(FormattableString.Invariant($"{Marker} {label} {wall:0.000} {cpu:0.000}"));
    }

    /// <summary>In the parent: appends one row for a finished child.</summary>
    public static void Write(IReadOnlyList<string> labArguments, string childErrors, double resultAt, double exitedAt)
    {
        if (Environment.GetEnvironmentVariable(Variable) is { Length: > 0 } path) Append(path, labArguments, childErrors, resultAt, exitedAt);
    }

    /// <summary>
    /// Appends to <paramref name="path"/> the row for one child: experiment, key; the child's wall and CPU seconds at its
    /// entry, result and written marks (empty where it wrote none); the parent's seconds from starting it to reading its
    /// result line and to its exit; and the difference, the child's way out.
    /// </summary>
    internal static void Append(string path, IReadOnlyList<string> labArguments, string childErrors, double resultAt, double exitedAt)
    {
        var marks = childErrors.Split('\n', StringSplitOptions.TrimEntries)
            .Where(l => l.StartsWith(Marker, StringComparison.Ordinal))
            .Select(l => l[Marker.Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(p => p.Length == 3)
            .ToDictionary(p => p[0], p => (Wall: p[1], Cpu: p[2]), StringComparer.Ordinal);
        string Get(string label, bool cpu) => marks.TryGetValue(label, out var m) ? (cpu ? m.Cpu : m.Wall) : "";
        string row = string.Join('\t',
            labArguments.Count > 1 ? labArguments[1] : "",
            labArguments.Count > 2 ? labArguments[2] : "",
            Get("entry", false), Get("entry", true),
            Get("result", false), Get("result", true),
            Get("written", false), Get("written", true),
            resultAt.ToString("0.000", CultureInfo.InvariantCulture),
            exitedAt.ToString("0.000", CultureInfo.InvariantCulture),
            (exitedAt - resultAt).ToString("0.000", CultureInfo.InvariantCulture));
        lock (Gate) File.AppendAllText(path, row + "\n");
    }
}
