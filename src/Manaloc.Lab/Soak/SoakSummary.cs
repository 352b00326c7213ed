using System.Globalization;
using System.Text;

namespace Manaloc.Lab.Soak;

/// <summary>The soak's summary as markdown (printed, and written to soak-summary.md).</summary>
internal static class SoakSummary
{
    public static string Write(SoakCommand.Options options, TimeSpan elapsed, SoakCounters counters, IReadOnlyList<string> violations, IReadOnlyList<Drift> drift, MemorySampler memory)
    {
        var s = new StringBuilder();
        var c = CultureInfo.InvariantCulture;
        s.AppendLine("# Soak summary").AppendLine();
        s.AppendLine(c, $"{elapsed.TotalMinutes:0.0} minutes, {options.Threads} load threads (+ dispatcher cycling, event ping-pong and dispatcher workers) on {Environment.ProcessorCount} processors, .NET {Environment.Version}.");
        s.AppendLine(c, $"Result: {(violations.Count == 0 ? "0 violations" : $"{violations.Count} violation(s)")}.").AppendLine();
        s.AppendLine("| counter | value |").AppendLine("| --- | ---: |");
        foreach (var (name, value) in counters.Rows()) s.AppendLine(c, $"| {name} | {value:N0} |");
        s.AppendLine();
        s.AppendLine(c, $"Memory after warm-up ({SoakCommand.WarmUp(options.Duration).TotalSeconds:0} s), sampled each second (managed: after a full collection, less the buffers rented or idle in the buffer manager at that moment); drift is the least-squares slope relative to the mean:").AppendLine();
        s.AppendLine("| series | mean MB | drift KB/min | drift %/min | samples |").AppendLine("| --- | ---: | ---: | ---: | ---: |");
        foreach (var d in drift) s.AppendLine(c, $"| {d.Name} | {d.MeanMb:0.00} | {d.KbPerMinute:+0.0;-0.0;0.0} | {d.PercentPerMinute:+0.00;-0.00;0.00} | {d.Samples} |");
        if (violations.Count > 0)
        {
            s.AppendLine().AppendLine("Violations:").AppendLine();
            foreach (string v in violations.Take(50)) s.AppendLine(c, $"- {v}");
        }
        return s.ToString();
    }
}
