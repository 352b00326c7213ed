using System.Diagnostics;
using System.Runtime;
using Manaloc.Lab.Subjects;

namespace Manaloc.Lab.Experiments;

/// <summary>What the <c>live-set</c> parent asks one child process to measure, and its form on the command line.</summary>
/// <param name="Variant">One of <see cref="LiveSetSubject.All"/>.</param>
/// <param name="Records">Live records.</param>
/// <param name="ChurnRounds">Rounds of the churn phase, each replacing a tenth of the set; 0: no churn phase (a quick run's
/// path whose churn no target reads, in the launches that leave it out).</param>
internal sealed record LiveSetPlan(string Variant, int Records, int ChurnRounds)
{
    /// <summary>The plan as the child's arguments.</summary>
    public IReadOnlyList<string> ToArguments()
        => [Variant, Records.ToString(CultureInfo.InvariantCulture), ChurnRounds.ToString(CultureInfo.InvariantCulture)];

    /// <summary>Reads a plan back from <see cref="ToArguments"/>'s form.</summary>
    /// <exception cref="ArgumentException">Not three arguments, an unknown variant, records that are not a positive whole
    /// number, or churn rounds that are not a whole number (0 or more).</exception>
    public static LiveSetPlan Parse(IReadOnlyList<string> arguments)
    {
        ChildPlanArguments.Check(arguments, "live-set", ["variant", "records", "churn rounds"], LiveSetSubject.All);
        return new LiveSetPlan(arguments[0], Whole(arguments[1], "records", least: 1), Whole(arguments[2], "churn rounds", least: 0));
    }

    private static int Whole(string text, string what, int least)
        => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n >= least
            ? n
            : throw new ArgumentException($"The live-set child's {what} must be a whole number of at least {least}, not '{text}'.", nameof(text));
}

/// <summary>
/// The pause of every garbage collection seen while it runs, from <see cref="GC.GetGCMemoryInfo(GCKind)"/>: the
/// caller polls after it sees the collection count move; each GC's pause is the sum of its pause durations (a
/// background GC has two). A GC whose information was overwritten before a poll is counted as unobserved.
/// </summary>
internal sealed class GcPauseLog(long startIndex)
{
    private readonly Dictionary<long, double> _pauses = [];
    private readonly int[] _byGeneration = new int[3];

    /// <summary>A log that counts the collections after the last one completed now.</summary>
    public static GcPauseLog StartingNow() => new(GC.GetGCMemoryInfo(GCKind.Any).Index);

    /// <summary>Pauses (ms) of the collections observed, one per GC.</summary>
    public IReadOnlyCollection<double> PausesMs => _pauses.Values;

    /// <summary>Collections observed per generation collected (0, 1, 2).</summary>
    public IReadOnlyList<int> ByGeneration => _byGeneration;

    /// <summary>Records GC <paramref name="index"/>'s pause and generation, once; a GC from before the log started is ignored.</summary>
    public void Observe(long index, double pauseMs, int generation)
    {
        if (index > startIndex && _pauses.TryAdd(index, pauseMs)) _byGeneration[Math.Clamp(generation, 0, 2)]++;
    }

    /// <summary>Reads the last GC of any kind and the last background GC (which may complete after a later ephemeral one).</summary>
    public void Poll()
    {
        foreach (var kind in new[] { GCKind.Any, GCKind.Background })
        {
            var info = GC.GetGCMemoryInfo(kind);
            double pause = 0;
            foreach (var p in info.PauseDurations) pause += p.TotalMilliseconds;
            if (info.Index > 0) Observe(info.Index, pause, info.Generation);
        }
    }

    /// <summary>Collections that ran up to GC index <paramref name="lastIndex"/> but were not observed.</summary>
    public long Unobserved(long lastIndex) => Math.Max(0, lastIndex - startIndex - _pauses.Count);
}
