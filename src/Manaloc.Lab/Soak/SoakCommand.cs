using System.Diagnostics;
using System.Globalization;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Soak;

/// <summary>
/// <c>lab soak --minutes N | --seconds N [--out DIR] [--threads N] [--max-drift PCT]</c>: every
/// component together under random load on all cores, invariants checked continuously; exits 1 on
/// any violation (or on memory drift above --max-drift when it is given), 2 on bad arguments.
/// Writes DIR/soak-summary.md (default artifacts/soak).
/// </summary>
public static class SoakCommand
{
    /// <summary>Runs the soak with the arguments after <c>soak</c>; returns the exit code.</summary>
    public static int Run(string[] args, TextWriter stdout, TextWriter stderr)
    {
        if (!TryParse(args, out var options, out string? error))
        {
            stderr.WriteLine($"error: {error}");
            stderr.WriteLine("usage: lab soak (--minutes N | --seconds N) [--out DIR] [--threads N] [--max-drift PCT]");
            return 2;
        }
        Directory.CreateDirectory(options.OutDir);
        stdout.WriteLine($"soak: {options.Duration.TotalSeconds:0} s, {Format.Count(options.Threads, "load thread")} on {Format.Count(Environment.ProcessorCount, "processor")}; summary in {options.OutDir}");

        using var run = new SoakRun(options.Threads);
        var memory = new MemorySampler(options.Duration);
        var clock = Stopwatch.StartNew();
        var nextProgress = TimeSpan.FromSeconds(10);
        run.Start();
        while (clock.Elapsed < options.Duration && run.Violations.Count == 0)
        {
            Thread.Sleep(TimeSpan.FromSeconds(1));
            if (!memory.SampleAtQuietPoint(clock.Elapsed, run, out int parked, out int participants))
            {
                run.Violations.Enqueue($"the soak threads did not all reach their quiet point within {run.Hang.Limit.TotalSeconds:0} s while the process ran ({parked} of {participants} parked; hang)");
            }
            if (clock.Elapsed >= nextProgress)
            {
                nextProgress += TimeSpan.FromSeconds(10);
                stdout.WriteLine($"  {clock.Elapsed.TotalSeconds,5:0} s  {run.Counters.Describe()}  violations {run.Violations.Count}  stalls {run.Hang.Count}  managed {memory.LastManagedMb:0.0} MB  native {memory.LastNativeMb:0.0} MB  private {memory.LastPrivateMb:0.0} MB");
            }
        }
        run.StopAndCheck();
        clock.Stop();

        var drift = memory.Drift(warmUp: WarmUp(options.Duration));
        var violations = run.Violations.ToList();
        if (options.MaxDriftPercentPerMinute is double limit)
        {
            foreach (var (name, percent) in drift.Where(d => Math.Abs(d.PercentPerMinute) > limit).Select(d => (d.Name, d.PercentPerMinute)))
            {
                violations.Add($"{name} drifted {percent:+0.00;-0.00}%/min after warm-up (limit {limit}%/min)");
            }
        }
        string summary = SoakSummary.Write(options, clock.Elapsed, run.Counters, violations, drift, memory, run);
        File.WriteAllText(Path.Combine(options.OutDir, "soak-summary.md"), summary);
        stdout.WriteLine(summary);
        if (violations.Count > 0)
        {
            foreach (string v in violations) stderr.WriteLine($"violation: {v}");
            return 1;
        }
        return 0;
    }

    /// <summary>Warm-up excluded from drift: a quarter of the run, at most two minutes.</summary>
    internal static TimeSpan WarmUp(TimeSpan duration) => TimeSpan.FromTicks(Math.Min(duration.Ticks / 4, TimeSpan.FromMinutes(2).Ticks));

    internal sealed record Options(TimeSpan Duration, string OutDir, int Threads, double? MaxDriftPercentPerMinute);

    internal static bool TryParse(string[] args, out Options options, out string? error)
    {
        options = new Options(TimeSpan.Zero, Path.Combine("artifacts", "soak"), Math.Max(2, Environment.ProcessorCount), null);
        error = null;
        TimeSpan? duration = null;
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            if (i + 1 >= args.Length) { error = $"{name} needs a value"; return false; }
            string value = args[++i];
            bool number = double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out double n) && n > 0 && n <= 24 * 60 * 60;
            switch (name)
            {
                case "--minutes" when number: duration = TimeSpan.FromMinutes(n); break;
                case "--seconds" when number: duration = TimeSpan.FromSeconds(n); break;
                case "--threads" when number && n == Math.Floor(n) && n <= 256: options = options with { Threads = (int)n }; break;
                case "--max-drift" when number: options = options with { MaxDriftPercentPerMinute = n }; break;
                case "--out": options = options with { OutDir = value }; break;
                case "--minutes" or "--seconds" or "--threads" or "--max-drift": error = $"{name} '{value}' is not a positive number in range"; return false;
                default: error = $"unknown option '{name}'"; return false;
            }
        }
        if (duration is null) { error = "give --minutes N or --seconds N"; return false; }
        options = options with { Duration = duration.Value };
        return true;
    }
}
