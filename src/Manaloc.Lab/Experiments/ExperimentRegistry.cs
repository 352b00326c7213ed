namespace Manaloc.Lab.Experiments;

/// <summary>The one place experiments are registered, in the order a full run executes them.</summary>
public static class ExperimentRegistry
{
    /// <summary>Every registered experiment, new instances each call.</summary>
    public static IReadOnlyList<Experiment> All() =>
    [
        new ClockAllocations(),
        new TypedMemory(),
        new LiveSet(),
        new NativeMap(),
        new NativeCache(),
        new HeapContention(),
        new FirstUse(),
        new PoolScaling(),
        new Buffers(),
        new Pipelines(),
        new BufferWriter(),
        new Streams(),
        new IdleRelease(),
        new GcModes(),
        new ResetEvent(),
        new AsyncResult(),
        new Dispatcher(),
        new BoundedQueue(),
        new Deadline(),
        new FalseSharing(),
        new Rwlock(),
        new Processors(),
        new Quantum(),
        new Nagle(),
        new UdpSend(),
        new Server(),
        new Http(),
    ];

    /// <summary>Finds an experiment by name (case-insensitive).</summary>
    public static Experiment? Find(string name)
        => All().FirstOrDefault(e => string.Equals(e.Name, name, StringComparison.OrdinalIgnoreCase));
}
