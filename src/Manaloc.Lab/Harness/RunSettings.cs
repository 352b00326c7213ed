namespace Manaloc.Lab.Harness;

/// <summary>How long and how often the harness measures, and which thread counts a sweep visits.</summary>
public sealed record RunSettings
{
    /// <summary><c>quick</c> or <c>full</c>.</summary>
    public required string Mode { get; init; }
    /// <summary>Time spent running a body before any sample counts (tiered JIT, caches, pools).</summary>
    public TimeSpan WarmUp { get; init; }
    /// <summary>Target duration of one sample; the harness calibrates the operation count to it.</summary>
    public TimeSpan SampleTarget { get; init; }
    /// <summary>Samples per measurement.</summary>
    public int Samples { get; init; }
    /// <summary>Thread counts a sweep visits.</summary>
    public IReadOnlyList<int> ThreadCounts { get; init; } = DefaultThreadCounts(Environment.ProcessorCount);
    /// <summary>True in quick and smoke mode: experiments pick their smaller sizes.</summary>
    public bool IsQuick => Mode is "quick" or "smoke";
    /// <summary>True in smoke mode (tests): experiments pick their smallest sizes and fewest variants' repetitions.</summary>
    public bool IsSmoke => Mode == "smoke";

    /// <summary>Quick mode: every experiment in seconds, the whole suite within minutes on 2 cores.</summary>
    /// <remarks>
    /// The warm-up outlasts the runtime's tiering delay: tiered compilation starts counting calls
    /// only after 100 ms without new tier-0 code, and every measurement jits new code (its body),
    /// so a shorter warm-up measures tier-0 callees. 200 ms leaves time for the tier-1 rejit.
    /// </remarks>
    public static RunSettings Quick(IReadOnlyList<int>? threads = null) => new()
    {
        Mode = "quick",
        WarmUp = TimeSpan.FromMilliseconds(200),
        SampleTarget = TimeSpan.FromMilliseconds(15),
        Samples = 5,
        ThreadCounts = threads ?? DefaultThreadCounts(Environment.ProcessorCount),
    };

    /// <summary>Smoke mode, for tests: proves an experiment runs end to end; its figures mean little.</summary>
    public static RunSettings Smoke(IReadOnlyList<int>? threads = null) => new()
    {
        Mode = "smoke",
        WarmUp = TimeSpan.FromMilliseconds(1),
        SampleTarget = TimeSpan.FromMilliseconds(1),
        Samples = 2,
        ThreadCounts = threads ?? [1, 2],
    };

    /// <summary>Full mode: longer warm-up, more and longer samples.</summary>
    public static RunSettings Full(IReadOnlyList<int>? threads = null) => new()
    {
        Mode = "full",
        WarmUp = TimeSpan.FromMilliseconds(1000),
        SampleTarget = TimeSpan.FromMilliseconds(100),
        Samples = 15,
        ThreadCounts = threads ?? DefaultThreadCounts(Environment.ProcessorCount),
    };

    /// <summary>1, the powers of two below the processor count, the processor count, and twice it (oversubscription).</summary>
    public static IReadOnlyList<int> DefaultThreadCounts(int processors)
    {
        var counts = new SortedSet<int> { 1, Math.Max(1, processors), Math.Max(2, 2 * processors) };
        for (int n = 2; n < processors; n *= 2)
        {
            counts.Add(n);
        }
        return counts.ToArray();
    }

    /// <summary>Parses a thread list such as <c>1,2,4</c>.</summary>
    /// <exception cref="FormatException">The text is not a comma-separated list of integers in [1, 1024].</exception>
    public static IReadOnlyList<int> ParseThreadCounts(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var parts = text.Split(',', StringSplitOptions.TrimEntries);
        var counts = new SortedSet<int>();
        foreach (string part in parts)
        {
            if (!int.TryParse(part, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int n) || n < 1 || n > 1024)
            {
                throw new FormatException($"--threads expects a comma-separated list of whole numbers from 1 to 1024, like 1,2,4; '{part}' in '{text}' is not one.");
            }
            counts.Add(n);
        }
        return counts.ToArray();
    }
}
