using Manaloc.Collections;

namespace Manaloc.Caching;

/// <summary>
/// What is wrong with <see cref="NativeCacheOptions"/>, each problem naming its configuration key, so the host's start
/// fails with the key to fix rather than the first request failing in the cache's constructor.
/// </summary>
internal static class NativeCacheOptionsProblems
{
    /// <summary>Every problem with <paramref name="options"/>, each naming its key under <paramref name="section"/>; empty when they are valid.</summary>
    public static List<string> Of(NativeCacheOptions options, string section)
    {
        var problems = new List<string>();
        string maxBytes = $"{section}:{nameof(NativeCacheOptions.MaxBytes)}", maxEntryBytes = $"{section}:{nameof(NativeCacheOptions.MaxEntryBytes)}";
        bool budgetValid = options.MaxBytes is >= NativeCache.MinimumMaxBytes and <= NativeCache.MaximumMaxBytes;
        if (!budgetValid)
        {
            problems.Add($"{maxBytes} must be between {NativeCache.MinimumMaxBytes} and {NativeCache.MaximumMaxBytes} (was {options.MaxBytes}): the cache's budget "
                + $"in bytes, every native byte it holds; set it in configuration or in AddManalocDistributedCache(o => o.{nameof(NativeCacheOptions.MaxBytes)} = ...).");
        }
        if (options.MaxEntryBytes < 0)
            problems.Add($"{maxEntryBytes} must not be negative (was {options.MaxEntryBytes}; 0 for the default, a sixteenth of the space for entries).");
        else if (options.MaxEntryBytes > 0 && budgetValid && EntryLimitProblem(options.MaxBytes, options.MaxEntryBytes) is { } refusal)
            problems.Add($"{maxEntryBytes} is too large for {maxBytes} (was {options.MaxEntryBytes}): {refusal}");
        if (options.TimeProvider is null)
            problems.Add($"{nameof(NativeCacheOptions)}.{nameof(NativeCacheOptions.TimeProvider)} must not be null (it is set in code only).");
        return problems;
    }

    /// <summary>
    /// Why the cache refuses <paramref name="maxEntryBytes"/> with this budget, in its own words; null when it accepts
    /// it. The limit is the space for entries, the budget less the index, which only the cache's layout knows: so a cache
    /// of that budget is made and disposed (once, when the host starts, and only when an entry limit is set).
    /// </summary>
    private static string? EntryLimitProblem(long maxBytes, long maxEntryBytes)
    {
        try
        {
            using var probe = new NativeCache(new NativeCacheOptions { MaxBytes = maxBytes, MaxEntryBytes = maxEntryBytes });
            return null;
        }
        catch (ArgumentOutOfRangeException e)
        {
            // The message without the " (Parameter ...)" and "Actual value" lines the exception appends.
            int end = e.Message.IndexOf(" (Parameter", StringComparison.Ordinal);
            return end > 0 ? e.Message[..end] : e.Message;
        }
    }
}
