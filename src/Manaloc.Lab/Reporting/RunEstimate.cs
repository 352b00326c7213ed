namespace Manaloc.Lab.Reporting;

/// <summary>
/// The time left in a lab run, as a pure function of what each experiment declared it would cost
/// (<see cref="Harness.Experiment.ExpectedSeconds"/>) and what the finished ones took.
/// </summary>
/// <remarks>
/// Experiments differ by two orders of magnitude (clock-allocations takes seconds, server a minute),
/// so "the rest take as long on average as the finished ones" jumps by large factors whenever a short
/// experiment follows a long one. Here the declared costs carry the shape of the run, and the run's
/// pace — how much longer or shorter than declared the work so far took on this machine — scales
/// them; the estimate moves continuously while an experiment runs. The pace starts at 1 and is drawn from the evidence only as the evidence grows (the declared
/// seconds of finished work against a prior of <see cref="PriorSeconds"/>), and it stays within
/// [1/<see cref="MaxPace"/>, <see cref="MaxPace"/>], so one slow experiment moves the estimate by a
/// bounded factor, never by the 4x a per-experiment average gives.
/// </remarks>
public static class RunEstimate
{
    /// <summary>The weight, in declared seconds, of the prior pace of 1: finished work must outweigh it before the pace follows the machine.</summary>
    public const double PriorSeconds = 30;

    /// <summary>The pace never goes beyond this factor either way.</summary>
    public const double MaxPace = 4;

    /// <summary>
    /// How much longer (above 1) or shorter (below 1) than declared this run's work takes: the finished
    /// experiments' seconds against their declared seconds, shrunk toward 1 by <see cref="PriorSeconds"/>
    /// and clamped; then the running experiment's seconds so far, counted against the declared seconds
    /// they would cover at that pace (so it moves nothing while the experiment keeps the pace) and, once
    /// it overruns, against its whole declaration (so the pace grows with the overrun, from where it was).
    /// </summary>
    /// <param name="expectedSeconds">Every experiment's declared cost, in run order.</param>
    /// <param name="finishedSeconds">What the first experiments took (as many as have finished).</param>
    /// <param name="currentElapsedSeconds">How long the running experiment (the next one) has run so far; 0 when none runs.</param>
    public static double Pace(IReadOnlyList<double> expectedSeconds, IReadOnlyList<double> finishedSeconds, double currentElapsedSeconds = 0)
    {
        Validate(expectedSeconds, finishedSeconds, currentElapsedSeconds);
        double actual = PriorSeconds, declared = PriorSeconds;
        for (int i = 0; i < finishedSeconds.Count; i++)
        {
            actual += finishedSeconds[i];
            declared += expectedSeconds[i];
        }
        double pace = Math.Clamp(actual / declared, 1 / MaxPace, MaxPace);
        int current = finishedSeconds.Count;
        if (current >= expectedSeconds.Count || currentElapsedSeconds == 0) return pace;
        // Continuous in the running time: the same pace up to the scaled declaration, then growing from it;
        // and at the finish the same figures the finished experiment then contributes.
        actual += currentElapsedSeconds;
        declared += Math.Min(currentElapsedSeconds / pace, expectedSeconds[current]);
        return Math.Clamp(actual / declared, 1 / MaxPace, MaxPace);
    }

    /// <summary>
    /// Seconds left: the running experiment's declared cost times the pace, less what it has run (never
    /// below a tenth of its scaled cost while it runs: it is not done), plus every later experiment's
    /// declared cost times the pace. 0 when every experiment has finished.
    /// </summary>
    /// <inheritdoc cref="Pace" path="/param"/>
    public static double RemainingSeconds(IReadOnlyList<double> expectedSeconds, IReadOnlyList<double> finishedSeconds, double currentElapsedSeconds = 0)
    {
        double pace = Pace(expectedSeconds, finishedSeconds, currentElapsedSeconds);
        int current = finishedSeconds.Count;
        if (current >= expectedSeconds.Count) return 0;
        double scaled = expectedSeconds[current] * pace;
        double left = Math.Max(scaled - currentElapsedSeconds, scaled / 10);
        for (int i = current + 1; i < expectedSeconds.Count; i++) left += expectedSeconds[i] * pace;
        return left;
    }

    private static void Validate(IReadOnlyList<double> expectedSeconds, IReadOnlyList<double> finishedSeconds, double currentElapsedSeconds)
    {
        ArgumentNullException.ThrowIfNull(expectedSeconds);
        ArgumentNullException.ThrowIfNull(finishedSeconds);
        if (finishedSeconds.Count > expectedSeconds.Count)
        {
            throw new ArgumentException($"{finishedSeconds.Count} finished experiments, but only {expectedSeconds.Count} declared.", nameof(finishedSeconds));
        }
        foreach (double s in expectedSeconds.Concat(finishedSeconds).Append(currentElapsedSeconds))
        {
            if (!double.IsFinite(s) || s < 0) throw new ArgumentOutOfRangeException(nameof(expectedSeconds), s, "Durations must be finite and not negative.");
        }
    }
}
