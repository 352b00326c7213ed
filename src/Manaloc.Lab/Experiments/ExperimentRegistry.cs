namespace Manaloc.Lab.Experiments;

/// <summary>The one place experiments are registered, in the order a full run executes them.</summary>
/// <remarks>
/// Each experiment is registered by name beside its constructor, so that <see cref="Find"/> builds only the one it
/// names: every child process looks its experiment up by name, and building all of them (their declarations, claims
/// and targets, each jitted afresh in that process) cost each child more start-up than its one experiment. A test
/// checks that every registered name builds the experiment of that name.
/// </remarks>
public static class ExperimentRegistry
{
    private static readonly (string Name, Func<Experiment> Create)[] Registered =
    [
        ("clock-allocations", () => new ClockAllocations()),
        ("typed-memory", () => new TypedMemory()),
        ("live-set", () => new LiveSet()),
        ("native-map", () => new NativeMap()),
        ("native-cache", () => new NativeCache()),
        ("heap-contention", () => new HeapContention()),
        ("first-use", () => new FirstUse()),
        ("pool-scaling", () => new PoolScaling()),
        ("buffers", () => new Buffers()),
        ("pipelines", () => new Pipelines()),
        ("buffer-writer", () => new BufferWriter()),
        ("streams", () => new Streams()),
        ("idle-release", () => new IdleRelease()),
        ("gc-modes", () => new GcModes()),
        ("reset-event", () => new ResetEvent()),
        ("async-result", () => new AsyncResult()),
        ("dispatcher", () => new Dispatcher()),
        ("bounded-queue", () => new BoundedQueue()),
        ("deadline", () => new Deadline()),
        ("false-sharing", () => new FalseSharing()),
        ("rwlock", () => new Rwlock()),
        ("processors", () => new Processors()),
        ("quantum", () => new Quantum()),
        ("nagle", () => new Nagle()),
        ("udp-send", () => new UdpSend()),
        ("server", () => new Server()),
        ("http", () => new Http()),
    ];

    /// <summary>The registered names, in run order.</summary>
    public static IReadOnlyList<string> Names { get; } = Array.ConvertAll(Registered, r => r.Name);

    /// <summary>Every registered experiment, new instances each call.</summary>
    public static IReadOnlyList<Experiment> All() => Array.ConvertAll(Registered, r => r.Create());

    /// <summary>Finds an experiment by name (case-insensitive) and builds only that one; null when no experiment has that name.</summary>
    public static Experiment? Find(string name)
    {
        foreach (var (registered, create) in Registered)
        {
            if (string.Equals(registered, name, StringComparison.OrdinalIgnoreCase)) return create();
        }
        return null;
    }
}
