using System.Globalization;
using System.Text;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Soak;

/// <summary>The soak's summary as markdown (printed, and written to soak-summary.md).</summary>
internal static class SoakSummary
{
    public static string Write(SoakCommand.Options options, TimeSpan elapsed, SoakCounters counters, IReadOnlyList<string> violations, IReadOnlyList<Drift> drift, MemorySampler memory, SoakRun run)
    {
        var s = new StringBuilder();
        var c = CultureInfo.InvariantCulture;
        s.AppendLine("# Soak summary").AppendLine();
        s.AppendLine(c, $"{elapsed.TotalMinutes:0.0} minutes, {Format.Count(options.Threads, "load thread")} (+ dispatcher cycling, event ping-pong and dispatcher workers) on {Format.Count(Environment.ProcessorCount, "processor")}, .NET {Environment.Version}.");
        string stalls = run.Hang.Count == 0 ? "no stall" : $"{Format.Count(run.Hang.Count, "wait")} held up by a stall of the whole process (longest {run.Hang.Longest.TotalSeconds:0.0} s not running)";
        s.AppendLine(c, $"Result: {(violations.Count == 0 ? "0 violations" : $"{Format.Count(violations.Count, "violation")}")}, {stalls}.").AppendLine();
        s.AppendLine("| counter | value |").AppendLine("| --- | ---: |");
        foreach (var (name, value) in counters.Rows()) s.AppendLine(c, $"| {name} | {value:N0} |");
        s.AppendLine();
        WriteStalls(s, run);
        var sizes = run.Sizes;
        s.AppendLine(c, $"Memory after warm-up ({SoakCommand.WarmUp(options.Duration).TotalSeconds:0} s), sampled each second with the load and dispatcher threads parked at their quiet point")
            .AppendLine(c, $"(managed: live bytes after full collections, {memory.Collections:N0} in all, less what the soak held in flight at that point: records' handles {sizes.RecordHandle} B each,")
            .AppendLine(c, $"pooled objects {sizes.Pooled} B, buffers rented or idle in the buffer manager at their length + {sizes.ArrayOverhead} B, held-set entries {sizes.HeldSetEntry} B;")
            .AppendLine(c, $"{Format.Count(memory.UnsettledSamples, "sample")} where the count had not settled after the last collection; the threads were parked for sampling {memory.Parked.TotalSeconds:0.0} s in all, stalls included). Drift is the least-squares slope ± its standard error; spread is the samples' standard deviation around the line:").AppendLine();
        s.AppendLine("| series | mean MB | drift KB/min | drift %/min | spread KB | samples |").AppendLine("| --- | ---: | ---: | ---: | ---: | ---: |");
        foreach (var d in drift)
        {
            s.AppendLine(c, $"| {d.Name} | {d.MeanMb:0.00} | {d.KbPerMinute:+0.0;-0.0;0.0} ± {d.StandardErrorKbPerMinute:0.0} | {d.PercentPerMinute:+0.00;-0.00;0.00} | {d.SpreadKb:0.0} | {d.Samples} |");
        }
        if (violations.Count > 0)
        {
            s.AppendLine().AppendLine("Violations:").AppendLine();
            foreach (string v in violations.Take(50)) s.AppendLine(c, $"- {v}");
        }
        return s.ToString();
    }

    private static void WriteStalls(StringBuilder s, SoakRun run)
    {
        var c = CultureInfo.InvariantCulture;
        var heartbeat = run.Heartbeat;
        s.AppendLine(c, $"Stalls: the heartbeat (a thread ticking every {Heartbeat.Period.TotalMilliseconds:0} ms) saw {Format.Count(heartbeat.Gaps, "gap", format: "N0")} of over {Heartbeat.GapThreshold.TotalMilliseconds:0} ms where the process did not run")
            .AppendLine(c, $"(longest {heartbeat.LongestGap.TotalSeconds:0.000} s, {heartbeat.TotalGap.TotalSeconds:0.000} s in all). A timed wait that gives up after {run.Hang.Limit.TotalSeconds:0} s is a violation unless the process ran")
            .AppendLine(c, $"for less than half of that while it waited; then it is counted as a stall and waits again: {run.Hang.Count:N0} such wait(s), {run.Hang.Total.TotalSeconds:0.0} s not running in all.");
        if (run.Hang.Count > 0)
        {
            s.AppendLine().AppendLine("| wait held up by a stall | waited s | not running s |").AppendLine("| --- | ---: | ---: |");
            foreach (var stall in run.Hang.FirstStalls) s.AppendLine(c, $"| {stall.What} | {stall.Waited.TotalSeconds:0.0} | {stall.NotRunning.TotalSeconds:0.0} |");
        }
        s.AppendLine();
    }
}
