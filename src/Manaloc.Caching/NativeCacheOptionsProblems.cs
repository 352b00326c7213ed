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
        else if (options.MaxEntryBytes > 0 && options.MaxEntryBytes < NativeCache.EntrySize(0, 0))
        {
            problems.Add($"{maxEntryBytes} is below the smallest entry (was {options.MaxEntryBytes}): at least {NativeCache.EntrySize(0, 0)} "
                + "(an empty key and value in one chunk; the limit counts key, value and header in whole chunks), or 0 for the default.");
        }
        else if (budgetValid && options.MaxEntryBytes > NativeCache.SpaceForEntries(options.MaxBytes))
        {
            problems.Add($"{maxEntryBytes} is too large for {maxBytes} (was {options.MaxEntryBytes}): at most "
                + $"{NativeCache.SpaceForEntries(options.MaxBytes)}, the space for entries in a budget of {options.MaxBytes} bytes (0 for the default, a sixteenth of it).");
        }
        if (options.TimeProvider is null)
            problems.Add($"{nameof(NativeCacheOptions)}.{nameof(NativeCacheOptions.TimeProvider)} must not be null (it is set in code only).");
        return problems;
    }
}
