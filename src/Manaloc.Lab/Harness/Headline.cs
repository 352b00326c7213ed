namespace Manaloc.Lab.Harness;

/// <summary>
/// What an experiment means for someone choosing a Manaloc path: the figure of the path it recommends
/// against the alternative a user has (<c>new</c>, <c>ArrayPool.Shared</c>, <c>AutoResetEvent</c> …),
/// and figures shown beside it (the weakest path's, another workload's). Declared by the experiment,
/// evaluated and rendered by the harness with its 95% interval, and shown before the article's claim,
/// which keeps its own verdict: the claim says whether the article still holds, the headline says
/// which path to pick.
/// </summary>
/// <param name="Figure">The headline figure; its name says the path, the alternative and the unit's meaning.</param>
/// <param name="Beside">Figures shown beside it, e.g. the weakest path's; may be empty.</param>
public sealed record Headline(Metric Figure, params IReadOnlyList<Metric> Beside)
{
    /// <summary>The headline figure first, then the ones beside it.</summary>
    public IEnumerable<Metric> AllFigures => [Figure, .. Beside];
}

/// <summary>One evaluated figure of a <see cref="Headline"/>: today's value and its 95% bootstrap interval.</summary>
/// <param name="Name">What the figure is (the metric's name).</param>
/// <param name="Value">Today's figure; null when this run did not measure it.</param>
/// <param name="Unit">Its unit.</param>
public sealed record HeadlineFigure(string Name, double? Value, Unit Unit)
{
    /// <summary>Low end of the 95% bootstrap interval; null when not computed.</summary>
    public double? Low { get; init; }

    /// <summary>High end of the 95% bootstrap interval; null when not computed.</summary>
    public double? High { get; init; }

    /// <summary>"struct handles …: 0.009x (0.007x–0.011x)", or "…: not measured".</summary>
    public override string ToString()
        => $"{Name}: {(Value is null ? "not measured" : Format.Estimate(Value, Low, High, Unit))}";
}

/// <summary>An experiment's <see cref="Headline"/> evaluated on one run.</summary>
/// <param name="Figure">The headline figure.</param>
/// <param name="Beside">The figures shown beside it.</param>
public sealed record HeadlineResult(HeadlineFigure Figure, IReadOnlyList<HeadlineFigure> Beside)
{
    /// <summary>The headline figure, then the ones beside it in brackets: one line for any report.</summary>
    public override string ToString()
        => Beside.Count == 0 ? Figure.ToString() : $"{Figure} [{string.Join("; ", Beside)}]";

    /// <summary>Evaluates <paramref name="headline"/> on <paramref name="measurements"/> (see <see cref="Judgement.EstimateAll"/>).</summary>
    /// <param name="seed">Seeds the resampling, so the same figures always give the same interval.</param>
    public static HeadlineResult Evaluate(Headline headline, IReadOnlyList<Measurement> measurements, int seed)
    {
        ArgumentNullException.ThrowIfNull(headline);
        var metrics = headline.AllFigures.ToArray();
        var estimates = Judgement.EstimateAll(measurements, metrics, seed);
        var figures = metrics.Select((m, i) => new HeadlineFigure(m.Name, estimates[i].Point, m.Unit)
        {
            Low = estimates[i].Point is null ? null : estimates[i].Low,
            High = estimates[i].Point is null ? null : estimates[i].High,
        }).ToArray();
        return new HeadlineResult(figures[0], figures[1..]);
    }

    /// <summary>The headline with every figure unmeasured: for a run that failed before it could measure.</summary>
    public static HeadlineResult NotMeasured(Headline headline)
    {
        ArgumentNullException.ThrowIfNull(headline);
        return new HeadlineResult(new HeadlineFigure(headline.Figure.Name, null, headline.Figure.Unit),
            [.. headline.Beside.Select(m => new HeadlineFigure(m.Name, null, m.Unit))]);
    }
}
