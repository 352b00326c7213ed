namespace Manaloc.Lab.Harness;

/// <summary>
/// What an experiment measures through: single-thread measurements, thread sweeps, custom samples,
/// child processes, notes and tables. Everything recorded here becomes the experiment's result.
/// </summary>
/// <remarks>Not thread-safe: an experiment records from the thread that runs it.</remarks>
public sealed class ExperimentContext
{
    private readonly List<Measurement> _measurements = [];
    private readonly List<string> _notes = [];
    private readonly List<ResultTable> _tables = [];
    private readonly Dictionary<string, double> _values = new(StringComparer.Ordinal);
    private readonly Dictionary<string, string> _texts = new(StringComparer.Ordinal);
    private readonly ILabProgress _progress;

    /// <summary>Creates a context for experiment <paramref name="experimentName"/>.</summary>
    public ExperimentContext(string experimentName, RunSettings settings, ILabProgress? progress = null, CancellationToken cancellation = default)
    {
        ExperimentName = experimentName;
        Settings = settings;
        _progress = progress ?? NullProgress.Instance;
        Cancellation = cancellation;
    }

    /// <summary>The experiment this context belongs to.</summary>
    public string ExperimentName { get; }
    /// <summary>Warm-up, samples and thread counts.</summary>
    public RunSettings Settings { get; }
    /// <summary>True in quick mode (and in smoke mode).</summary>
    public bool IsQuick => Settings.IsQuick;
    /// <summary>True in smoke mode (tests): smallest sizes, figures mean little.</summary>
    public bool IsSmoke => Settings.IsSmoke;
    /// <summary>Thread counts a sweep visits (from <c>--threads</c> or the default).</summary>
    public IReadOnlyList<int> ThreadCounts => Settings.ThreadCounts;
    /// <summary>Signalled when the user stops the run.</summary>
    public CancellationToken Cancellation { get; }
    /// <summary>Measurements so far.</summary>
    public IReadOnlyList<Measurement> Measurements => _measurements;
    /// <summary>Notes so far.</summary>
    public IReadOnlyList<string> Notes => _notes;
    /// <summary>Tables so far.</summary>
    public IReadOnlyList<ResultTable> Tables => _tables;
    /// <summary>Named values (sent back by a child process).</summary>
    public IReadOnlyDictionary<string, double> Values => _values;
    /// <summary>Named texts (sent back by a child process).</summary>
    public IReadOnlyDictionary<string, string> Texts => _texts;

    /// <summary>Measures a single-threaded body that performs the given number of operations.</summary>
    public Measurement Measure(string variant, Action<long> body, Parameters? parameters = null, long? fixedOperations = null)
    {
        Status($"{variant} {FormatParameters(parameters)}");
        Cancellation.ThrowIfCancellationRequested();
        return Record(Bench.Measure(variant, body, Settings, parameters, fixedOperations));
    }

    /// <summary>
    /// Measures single-threaded bodies side by side, the harness's way to compare variants on a shared
    /// machine: each body is calibrated and warmed up on its own, then all are sampled in interleaved
    /// rounds (<see cref="Rounds.Interleave"/>, one sample of each per round), so outside load hits every
    /// variant alike. Records and returns one measurement per variant, in the given order.
    /// </summary>
    public IReadOnlyList<Measurement> Compare(IReadOnlyList<(string Variant, Action<long> Body)> variants, Parameters? parameters = null)
    {
        ArgumentNullException.ThrowIfNull(variants);
        return Compare([.. variants.Select(v => (v.Variant, parameters ?? Harness.Parameters.None, v.Body))]);
    }

    /// <summary>
    /// Measures cells — a variant under its parameters — side by side, as <see cref="Compare(IReadOnlyList{ValueTuple{string, Action{long}}}, Parameters?)"/>
    /// does for one set of parameters: every cell calibrated and warmed up on its own, then all sampled in
    /// interleaved rounds. Records and returns one measurement per cell, in the given order.
    /// </summary>
    /// <param name="cells">The cells, each calibrated on its own.</param>
    /// <param name="rounds">Interleaved rounds, each one sample of every cell; null for the settings' samples. More rounds
    /// narrow the interval of a ratio between two fast cells, which outside load moves most.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="rounds"/> is not positive.</exception>
    public IReadOnlyList<Measurement> Compare(IReadOnlyList<(string Variant, Parameters Parameters, Action<long> Body)> cells, int? rounds = null)
    {
        ArgumentNullException.ThrowIfNull(cells);
        return Compare([.. cells.Select(c => (c.Variant, c.Parameters, c.Body, (long?)null))], rounds);
    }

    /// <summary>
    /// As <see cref="Compare(IReadOnlyList{ValueTuple{string, Parameters, Action{long}}}, int?)"/>, where a cell may bring its own
    /// operation count per sample (from a <see cref="Pilot"/>, for a body the calibration can misjudge): such a cell is
    /// warmed up at its count for the run's warm-up instead of calibrated; a null count is calibrated as usual.
    /// </summary>
    /// <param name="cells">The cells; a cell with a null count is calibrated on its own.</param>
    /// <param name="rounds">Interleaved rounds, each one sample of every cell; null for the settings' samples.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="rounds"/> is not positive, or a count is below 1.</exception>
    public IReadOnlyList<Measurement> Compare(IReadOnlyList<(string Variant, Parameters Parameters, Action<long> Body, long? Operations)> cells, int? rounds = null)
    {
        ArgumentNullException.ThrowIfNull(cells);
        int roundCount = rounds ?? Settings.Samples;
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(roundCount, nameof(rounds));
        var ops = new long[cells.Count];
        for (int v = 0; v < cells.Count; v++)
        {
            Status($"{cells[v].Variant} {FormatParameters(cells[v].Parameters)}: warming up");
            Cancellation.ThrowIfCancellationRequested();
            if (cells[v].Operations is { } fixedOps)
            {
                ArgumentOutOfRangeException.ThrowIfLessThan(fixedOps, 1, nameof(cells));
                Bench.WarmUp(cells[v].Body, fixedOps, Settings.WarmUp);
                ops[v] = fixedOps;
            }
            else
            {
                ops[v] = Bench.Calibrate(cells[v].Body, Settings);
            }
        }
        var merged = Rounds.Interleave(cells.Count, roundCount, Cancellation, (v, round) =>
        {
            if (v == 0) Status($"round {round + 1} of {roundCount}");
            return Bench.Sample(cells[v].Variant, cells[v].Body, ops[v], cells[v].Parameters);
        });
        foreach (var m in merged) Record(m);
        return merged;
    }

    /// <summary>Measures body(threadIndex, operations) on <paramref name="threads"/> threads started together.</summary>
    public Measurement MeasureThreads(string variant, int threads, Action<int, long> body, Parameters? parameters = null, long? totalOperations = null)
    {
        Status($"{variant} threads={threads} {FormatParameters(parameters)}");
        Cancellation.ThrowIfCancellationRequested();
        return Record(ThreadSweep.Measure(variant, threads, body, Settings, parameters, totalOperations));
    }

    /// <summary>Records samples the experiment measured itself (latencies, sizes, counts).</summary>
    public Measurement RecordSamples(
        string variant, Unit unit, IReadOnlyCollection<double> samples, Parameters? parameters = null,
        bool lowerIsBetter = true, int threads = 1, IReadOnlyDictionary<string, double>? metrics = null)
        => Record(new Measurement
        {
            Variant = variant,
            Parameters = parameters ?? Harness.Parameters.None,
            Unit = unit,
            LowerIsBetter = lowerIsBetter,
            Statistics = Statistics.From(samples),
            Threads = threads,
            Metrics = metrics ?? new Dictionary<string, double>(),
        });

    /// <summary>Records a measurement as is.</summary>
    public Measurement Record(Measurement measurement)
    {
        ArgumentNullException.ThrowIfNull(measurement);
        _measurements.Add(measurement);
        return measurement;
    }

    /// <summary>
    /// Runs <c>RunChild(key, arguments)</c> of this experiment in a fresh lab process with the given
    /// environment variables (null removes one) and returns what it recorded. Nothing is recorded
    /// here automatically: the experiment decides what to keep.
    /// </summary>
    /// <param name="key">The child's part of the experiment.</param>
    /// <param name="arguments">Its arguments.</param>
    /// <param name="environment">Variables to set in the child (null removes one).</param>
    /// <param name="timeout">How long it may take; null for a minute (quick) or five.</param>
    /// <param name="untimedWork">This process's untimed work, run only while the child is in one of its untimed windows
    /// (<see cref="Untimed"/>), or null.</param>
    public ChildOutput RunChild(string key, IReadOnlyList<string> arguments, IReadOnlyDictionary<string, string?>? environment = null, TimeSpan? timeout = null, UntimedWork? untimedWork = null)
    {
        Status($"child process: {key}");
        return RunLabChild(key, arguments, environment, timeout ?? TimeSpan.FromMinutes(IsQuick ? 1 : 5), untimedWork);
    }

    private int _untimedDepth;

    /// <summary>
    /// Runs untimed work (filling, settling collections, building inputs) as a window in which the parent may run its own
    /// untimed work (<see cref="RunChild"/>'s <c>untimedWork</c>) on the cores this work leaves idle. Returns only once the
    /// parent's work is parked again, so whatever the caller times next shares the machine with no other work of the lab.
    /// Outside such a child, or nested in another window, it just runs <paramref name="work"/>.
    /// </summary>
    public void Untimed(Action work)
    {
        ArgumentNullException.ThrowIfNull(work);
        bool announce = _untimedDepth == 0 && ChildProcess.AnnouncesUntimedWindows;
        if (announce) ChildProcess.AnnounceUntimed();
        _untimedDepth++;
        try
        {
            work();
        }
        finally
        {
            _untimedDepth--;
            if (announce) ChildProcess.AnnounceTimed();
        }
    }

    /// <summary>
    /// Runs the whole experiment, every variant, as launch <paramref name="launch"/> in a fresh lab process, and
    /// returns all it recorded (see <see cref="Launches"/>). An experiment that runs children of its own runs them
    /// from there, so each of its child runs belongs to one launch. <paramref name="environment"/> is the experiment's
    /// <see cref="Experiment.LaunchEnvironment"/>.
    /// </summary>
    internal ChildOutput RunLaunch(int launch, TimeSpan timeout, IReadOnlyDictionary<string, string?>? environment = null)
    {
        Status($"launch {launch + 1} of {Settings.Launches}");
        return RunLabChild(Experiment.LaunchKey, [launch.ToString(System.Globalization.CultureInfo.InvariantCulture)], environment, timeout, untimedWork: null);
    }

    /// <summary>
    /// Runs launches <paramref name="first"/> to <paramref name="first"/> + <paramref name="count"/> - 1 side by side, each
    /// in its own process as <see cref="RunLaunch"/> does, and returns what each sent back in launch order once all have
    /// ended; the first failure is thrown after every launch ended. Only for launches that time nothing.
    /// </summary>
    internal IReadOnlyList<ChildOutput> RunLaunchesTogether(int first, int count, TimeSpan timeout, IReadOnlyDictionary<string, string?>? environment = null)
    {
        Status($"launches {first + 1} to {first + count} of {Settings.Launches}, side by side");
        var running = Enumerable.Range(first, count)
            .Select(launch => Task.Run(() => RunLabChild(Experiment.LaunchKey, [launch.ToString(System.Globalization.CultureInfo.InvariantCulture)], environment, timeout, untimedWork: null)))
            .ToArray();
        foreach (var launch in running) ((IAsyncResult)launch).AsyncWaitHandle.WaitOne();
        return [.. running.Select(launch => launch.GetAwaiter().GetResult())];
    }

    private ChildOutput RunLabChild(string key, IReadOnlyList<string> arguments, IReadOnlyDictionary<string, string?>? environment, TimeSpan timeout, UntimedWork? untimedWork)
    {
        var command = new ChildCommand(ExperimentName, key, Settings.Mode, Settings.Launches, Settings.ThreadCounts, arguments);
        return ChildProcess.Run(command.ToArguments(), environment, timeout, Cancellation, untimedWork);
    }

    /// <summary>Adds a line to the experiment's notes.</summary>
    public void Note(string text) => _notes.Add(text);

    /// <summary>Adds a table to the report.</summary>
    public void AddTable(ResultTable table) => _tables.Add(table);

    /// <summary>Sets a named value (a child's way to send a number back).</summary>
    public void SetValue(string name, double value) => _values[name] = value;

    /// <summary>Sets a named text (a child's way to send a string back).</summary>
    public void SetText(string name, string value) => _texts[name] = value;

    /// <summary>Shows what the experiment is doing now.</summary>
    public void Status(string text) => _progress.Status($"{ExperimentName}: {text}".TrimEnd());

    /// <summary>What this context recorded, as a child's result.</summary>
    public ChildOutput ToChildOutput() => new()
    {
        Measurements = _measurements.ToArray(),
        Values = new Dictionary<string, double>(_values),
        Texts = new Dictionary<string, string>(_texts),
        Notes = _notes.ToArray(),
        Tables = _tables.ToArray(),
        Machine = MachineInfo.Current(),
    };

    private static string FormatParameters(Parameters? parameters)
        => parameters is null ? "" : Measurement.FormatParameters(parameters);
}
