namespace Manaloc.Collections;

/// <summary>Settings of a <see cref="NativeCache"/>.</summary>
/// <remarks>Read once by the cache's constructor, which validates them; changing the options afterwards changes
/// nothing. Not thread-safe (a plain settings object).</remarks>
public sealed class NativeCacheOptions
{
    /// <summary>The byte budget: every native byte the cache holds (index, keys, values, per-entry headers, unused
    /// space of its blocks) stays at or below it. Required, at least <see cref="NativeCache.MinimumMaxBytes"/>.</summary>
    public long MaxBytes { get; set; }

    /// <summary>The largest entry stored, counted as the cache counts it (key, value and the per-entry header, rounded
    /// up to whole 64-byte chunks); a larger one is refused (<c>Set</c> returns false). 0 (the default) means a
    /// sixteenth of the space for entries. Otherwise at least 64 (the smallest entry: an empty key and value in one chunk)
    /// and at most that space.</summary>
    public long MaxEntryBytes { get; set; }

    /// <summary>The name in exceptions, <c>ToString</c>, the leak report and the meters' <c>name</c> tag.</summary>
    public string? Name { get; set; }

    /// <summary>The clock of expiration (<see cref="TimeProvider.System"/> by default).</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;
}

/// <summary>How an entry expires; <c>default</c> means never. When several are given, the earliest expiry wins.</summary>
public readonly struct NativeCacheEntryOptions
{
    /// <summary>The entry expires this long after the <c>Set</c>; zero or less refuses the entry (already expired).</summary>
    public TimeSpan? TimeToLive { get; init; }

    /// <summary>The entry expires at this instant; an instant already past refuses the entry.</summary>
    public DateTimeOffset? AbsoluteExpiration { get; init; }

    /// <summary>The entry expires when it was not read (<c>TryGet</c>) nor refreshed (<c>Refresh</c>) for this long;
    /// never beyond <see cref="TimeToLive"/> or <see cref="AbsoluteExpiration"/>. Must be positive.</summary>
    public TimeSpan? SlidingExpiration { get; init; }
}

/// <summary>A snapshot of a <see cref="NativeCache"/>'s counters (each read on its own: not one atomic snapshot).</summary>
public readonly struct NativeCacheStatistics
{
    /// <summary>Reads the counters of a cache whose current store is <paramref name="store"/>; <paramref name="counters"/> are
    /// the ones its writers keep under its lock, each read here with Volatile.Read.</summary>
    internal NativeCacheStatistics(CacheStore store, long maxBytes, long hits, long misses, ref CacheCounters counters)
    {
        Entries = store.Count;
        Bytes = store.NativeBytes;
        MaxBytes = maxBytes;
        EntryBytes = store.EntryBytes;
        Hits = hits;
        Misses = misses;
        Evictions = Volatile.Read(ref counters.Evictions);
        Expirations = Volatile.Read(ref counters.Expirations);
        Refusals = Volatile.Read(ref counters.Refusals);
    }

    /// <summary>Entries held (an expired entry counts until the cache removes it).</summary>
    public long Entries { get; }

    /// <summary>Native bytes the cache reserves: its index, frequency sketch, directory of blocks and blocks, used or not.
    /// Never above <see cref="MaxBytes"/>. Resident memory is at most this: the index and the sketch are committed as entries touch them.</summary>
    public long Bytes { get; }

    /// <summary>The budget.</summary>
    public long MaxBytes { get; }

    /// <summary>Bytes of the chunks the held entries take (64 per chunk), part of <see cref="Bytes"/>.</summary>
    public long EntryBytes { get; }

    /// <summary>Reads that found a live entry.</summary>
    public long Hits { get; }

    /// <summary>Reads that found none (absent or expired).</summary>
    public long Misses { get; }

    /// <summary>Entries removed to make room.</summary>
    public long Evictions { get; }

    /// <summary>Expired entries removed.</summary>
    public long Expirations { get; }

    /// <summary>Sets refused: the entry above <see cref="NativeCacheOptions.MaxEntryBytes"/>, or already expired.</summary>
    public long Refusals { get; }
}
