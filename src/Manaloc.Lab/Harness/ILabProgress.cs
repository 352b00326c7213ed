namespace Manaloc.Lab.Harness;

/// <summary>Receives progress while experiments run; the reporters decide how (or whether) to show it.</summary>
public interface ILabProgress
{
    /// <summary>The run starts: every experiment's declared cost in seconds, in run order (<see cref="Experiment.ExpectedSeconds"/>).</summary>
    void RunStarted(IReadOnlyList<double> expectedSeconds);
    /// <summary>An experiment starts (index is 0-based).</summary>
    void ExperimentStarted(string name, int index, int count);
    /// <summary>The running experiment reports what it is doing now.</summary>
    void Status(string text);
    /// <summary>An experiment finished.</summary>
    void ExperimentFinished(ExperimentResult result);
}

/// <summary>Shows nothing.</summary>
public sealed class NullProgress : ILabProgress
{
    /// <summary>The one instance.</summary>
    public static NullProgress Instance { get; } = new();
    /// <inheritdoc/>
    public void RunStarted(IReadOnlyList<double> expectedSeconds) { }
    /// <inheritdoc/>
    public void ExperimentStarted(string name, int index, int count) { }
    /// <inheritdoc/>
    public void Status(string text) { }
    /// <inheritdoc/>
    public void ExperimentFinished(ExperimentResult result) { }
}
