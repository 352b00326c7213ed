using System.Text.RegularExpressions;
using Manaloc.Lab.Tests.Experiments;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>
/// The harness owns every timing: no experiment file warms up, interleaves, calibrates or accounts CPU by itself, or reads
/// the clock except for a timestamp that is the measured quantity (a request's latency, a collection's pause, a clock under
/// test), each listed below with its reason. A source scan of src/Manaloc.Lab/Experiments/*.cs, comments and string
/// literals left out; an experiment that needs one of these uses the harness's primitive named in the failure.
/// </summary>
public sealed partial class TimingOwnershipTests
{
    private sealed record Rule(string Name, Regex Pattern, string Instead);

    private static readonly Rule[] Rules =
    [
        new("clock", new Regex(@"\bStopwatch\b"), "read time through LabClock, and time through Measure, Compare, MeasureThreads or Scenarios.Run"),
        new("cpu", new Regex(@"TotalProcessorTime|\bCpuUsage\b|\bThreadCpuTime\b|ClockThreadCpuTimeId|getrusage"), "account CPU through ProcessCpu, Scenarios.Run or ThreadSweep.Measure(threadCpu: true), and a timed block's lost time through ThreadDisturbance"),
        new("tier-up", new Regex(@"\bTierUpPause\b"), "bring code to tier 1 through TierUp.Run"),
        new("calibration", new Regex(@"(?i)calibrat"), "size work through Pilot (NsPerOp, Spins) or the harness's calibration"),
        new("interleaving", new Regex(@"(?<!Rounds\s*\.\s*)(?i:interleav)\w*|\bBalancedOrder\b"), "interleave through Compare, Rounds.Interleave or Scenarios.Run"),
        new("warm-up", new Regex(@"\b\w*[Ww]arm[Uu]p\w*\s*\(|\b(?:var|int|long|double|void|TimeSpan|bool)\s+\w*[Ww]arm[Uu]p"), "warm up through TierUp.Run, Scenarios.Run or the settings' WarmUp"),
        new("timestamp", new Regex(@"\bLabClock\s*\.\s*(?:Time|Now|Since|Between)\b"), "let the harness time it; a timestamp that is itself the measured quantity goes on this test's allow-list with its reason"),
    ];

    /// <summary>(file, rule) → why the file does this itself. Every entry must still match: a stale one fails too.</summary>
    private static readonly Dictionary<(string File, string Rule), string> Allowed = new()
    {
        [("ClockAllocations.cs", "clock")] = "Stopwatch.GetTimestamp is one of the clocks under test",
        [("FirstUse.cs", "timestamp")] = "a first call's time is the measured quantity (a cold start, measured once per type)",
        [("BoundedQueue.cs", "timestamp")] = "a run's time from its first post to its last send, less its memory probe (a blocking full collection)",
        [("Dispatcher.cs", "timestamp")] = "each heartbeat's queue-to-run latency",
        [("Http.Load.cs", "timestamp")] = "each request's latency from its intended send time, and the open-loop schedule",
        [("Http.cs", "timestamp")] = "the idle wait after a flood, from the flood's end",
        [("Http.cs", "warm-up")] = "the HTTP service's load warm-up, in its child process: a phase of the scenario the harness cannot run in-process",
        [("LiveSetProbe.cs", "timestamp")] = "a full collection's pause, and the churn's own rate over its time limit",
        [("LiveSetProbe.cs", "warm-up")] = "first-use allocations kept out of a bytes-per-record figure: nothing is timed",
        [("NativeMapSubject.cs", "timestamp")] = "each insert's time while growing, and each of the growth floor's trivial operations beside it: the longest single insert and the floor's longest operation are the measured quantities",
        [("Nagle.cs", "timestamp")] = "each request-reply round's latency",
        [("Quantum.cs", "timestamp")] = "the timestamp trace that finds the scheduler's slices",
        [("TypedMemory.cs", "timestamp")] = "a full collection's pause",
        [("UdpSend.cs", "timestamp")] = "a batch's send time, without the drain that waits for the receiver",
        [("Pipelines.cs", "warm-up")] = "an untimed move that brings a pool to its steady population before its allocations are counted: nothing is timed",
    };

    private static string ExperimentsDirectory() => Path.Combine(OutOfTreeLab.RepositoryRoot(), "src", "Manaloc.Lab", "Experiments");

    [Fact]
    public void No_experiment_times_warms_up_interleaves_calibrates_or_accounts_cpu_by_itself()
    {
        var found = new HashSet<(string File, string Rule)>();
        var problems = new List<string>();
        var files = Directory.GetFiles(ExperimentsDirectory(), "*.cs");
        Assert.NotEmpty(files);
        foreach (string path in files)
        {
            string file = Path.GetFileName(path);
            string code = CodeOnly(File.ReadAllText(path));
            foreach (var rule in Rules)
            {
                var match = rule.Pattern.Match(code);
                if (!match.Success) continue;
                found.Add((file, rule.Name));
                if (Allowed.ContainsKey((file, rule.Name))) continue;
                int line = code[..match.Index].Count(c => c == '\n') + 1;
                problems.Add($"{file}:{line}: {rule.Name} ('{match.Value.Trim()}'): {rule.Instead}");
            }
        }
        var stale = Allowed.Keys.Where(k => !found.Contains(k)).Select(k => $"{k.File}: {k.Rule} is allowed but no longer found: remove it from the list").ToArray();
        Assert.True(problems.Count == 0 && stale.Length == 0, string.Join("\n", problems.Concat(stale)));
    }

    [Theory]
    [InlineData("var sw = Stopwatch.StartNew();", "clock")]
    [InlineData("var before = process.TotalProcessorTime;", "cpu")]
    [InlineData("Thread.Sleep(RunSettings.TierUpPause);", "tier-up")]
    [InlineData("double us = CalibrateSend();", "calibration")]
    [InlineData("int k = Rounds.BalancedOrder(3, r, i);", "interleaving")]
    [InlineData("foreach (var v in variants) InterleaveSamples(v);", "interleaving")]
    [InlineData("foreach (var v in variants) WarmUp(v);", "warm-up")]
    [InlineData("int warmUp = Math.Min(1_000, n);", "warm-up")]
    [InlineData("long start = LabClock.Now;", "timestamp")]
    public void The_scan_finds_each_kind(string line, string rule)
    {
        Assert.Matches(Rules.Single(r => r.Name == rule).Pattern, CodeOnly(line));
    }

    [Theory]
    [InlineData("// a warm-up, calibrated and interleaved by Stopwatch")]
    [InlineData("context.Note(\"interleaved rounds after a warm-up; Stopwatch.GetTimestamp\");")]
    [InlineData("var runs = Scenarios.Run(context, variants, items, warmUpSize: 1000, rounds: 3);")]
    [InlineData("var perRound = context.Settings with { WarmUp = TimeSpan.Zero, Samples = 1 };")]
    [InlineData("var merged = Rounds.Interleave(variants, rounds, context.Cancellation, measureOne);")]
    [InlineData("var warm = new double[samples]; // the warm type's first calls, measured")]
    public void Comments_strings_and_the_harness_s_own_knobs_pass(string line)
    {
        string code = CodeOnly(line);
        Assert.All(Rules, rule => Assert.DoesNotMatch(rule.Pattern, code));
    }

    /// <summary>The source without comments and without the contents of string and character literals (line breaks kept).</summary>
    internal static string CodeOnly(string source) => Literals().Replace(source, m =>
        m.Value.StartsWith("//", StringComparison.Ordinal) || m.Value.StartsWith("/*", StringComparison.Ordinal)
            ? new string('\n', m.Value.Count(c => c == '\n'))
            : "\"\"" + new string('\n', m.Value.Count(c => c == '\n')));

    // Raw strings, verbatim strings, regular strings (with escapes; an interpolated string's holes go with it), characters,
    // line comments and block comments, in the order the lexer would meet them.
    [GeneratedRegex(@"""""""[\s\S]*?""""""|@""(?:[^""]|"""")*""|""(?:\\.|[^""\\\n])*""|'(?:\\.|[^'\\\n])'|//[^\n]*|/\*[\s\S]*?\*/")]
    private static partial Regex Literals();
}
