using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>The one place experiments are registered, in the order a full run executes them.</summary>
public static class ExperimentRegistry
{
    /// <summary>Every registered experiment, new instances each call.</summary>
    public static IReadOnlyList<Experiment> All() =>
    [
        new ClockAllocations(),
        new PoolScaling(),
        new Buffers(),
        new GcModes(),
    ];

    /// <summary>Finds an experiment by name (case-insensitive).</summary>
    public static Experiment? Find(string name)
        => All().FirstOrDefault(e => string.Equals(e.Name, name, StringComparison.OrdinalIgnoreCase));
}
