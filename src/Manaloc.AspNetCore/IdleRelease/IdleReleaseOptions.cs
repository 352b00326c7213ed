namespace Manaloc.AspNetCore.IdleRelease;

/// <summary>
/// Settings of the idle release registered by <see cref="ManalocServiceCollectionExtensions.AddManalocIdleRelease"/>;
/// bound from the configuration section <c>Manaloc:IdleRelease</c> and validated when the host starts.
/// </summary>
/// <remarks>
/// <para>Why: after a burst, a service keeps the memory the burst made it take. Manaloc's pools give idle
/// buffers back on their own timers, and what they give back is garbage; but an idle service allocates
/// nothing, so no collection runs and the GC keeps its heap, its free space and its budgets committed. The
/// idle release waits until no request has started for <see cref="QuietAfter"/> and none is still running, then trims the pools and
/// runs one aggressive (blocking, compacting) collection, which decommits what the GC no longer needs.</para>
/// <para>Thread safety: set it up before the host starts; it is read once.</para>
/// </remarks>
public sealed class IdleReleaseOptions
{
    /// <summary>The configuration section: <c>Manaloc:IdleRelease</c>.</summary>
    public const string SectionName = "Manaloc:IdleRelease";

    /// <summary>How long no request may have started, with none still running, before the release runs (100 ms to 1 day; default 30 s).</summary>
    /// <remarks>The release runs once per quiet spell: between <see cref="QuietAfter"/> and 1.25 times it after the last request started or, if later, completed.</remarks>
    public TimeSpan QuietAfter { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Whether the release ends with an aggressive, blocking, compacting collection of every generation (default true); false: only the pools are trimmed.</summary>
    /// <remarks>The collection pauses the process (a few milliseconds for a heap of tens of MB), which is why it waits for a quiet spell.</remarks>
    public bool CollectGarbage { get; set; } = true;

    /// <summary>Every problem with these values, each naming its key under <paramref name="section"/>; empty when they are valid.</summary>
    internal List<string> Problems(string section)
    {
        var problems = new List<string>();
        if (QuietAfter < TimeSpan.FromMilliseconds(100) || QuietAfter > TimeSpan.FromDays(1))
            problems.Add($"{section}:{nameof(QuietAfter)} must be between 00:00:00.1 and 1.00:00:00 (was {QuietAfter}).");
        return problems;
    }
}
