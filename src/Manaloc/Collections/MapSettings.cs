namespace Manaloc.Collections;

/// <summary>What both maps read from their options, validated once: their one construction path.</summary>
/// <param name="Name">The name from the options (<c>native-map</c> by default).</param>
/// <param name="Description"><c>NativeMap&lt;long, Order&gt; 'orders'</c>: what messages, <c>ToString</c> and the leak report call the map.</param>
/// <param name="InitialCapacity">Entries before the first split.</param>
/// <param name="Hasher">The caller's hasher, or null for the default.</param>
/// <param name="Concurrent">Whether tables are made for lock-free readers.</param>
internal sealed unsafe record MapSettings<TKey, TValue>(string Name, string Description, int InitialCapacity, Func<TKey, ulong>? Hasher, bool Concurrent)
    where TKey : unmanaged, IEquatable<TKey>
    where TValue : unmanaged
{
    /// <summary>Validates <paramref name="options"/> for a map of kind <paramref name="kind"/> (<c>NativeMap</c>).</summary>
    /// <exception cref="NotSupportedException">The key and the value together exceed <see cref="NativeHashTable{TKey, TValue}.MaxEntryBytes"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The initial capacity is negative.</exception>
    public static MapSettings<TKey, TValue> Read(NativeMapOptions<TKey>? options, string kind, bool concurrent)
    {
        string name = string.IsNullOrWhiteSpace(options?.Name) ? "native-map" : options.Name;
        string description = $"{MapMetrics.Describe(kind, typeof(TKey), typeof(TValue))} '{name}'";
        if (sizeof(TKey) + sizeof(TValue) > NativeHashTable<TKey, TValue>.MaxEntryBytes)
        {
            ThrowHelper.ThrowEntryTooLarge(description, sizeof(TKey), sizeof(TValue), NativeHashTable<TKey, TValue>.MaxEntryBytes);
        }
        int initialCapacity = options?.InitialCapacity ?? 0;
        if (initialCapacity < 0) ThrowHelper.ThrowArgumentOutOfRange("options.InitialCapacity", initialCapacity, $"{description}: InitialCapacity must be 0 or more.");
        return new MapSettings<TKey, TValue>(name, description, initialCapacity, options?.Hasher, concurrent);
    }

    /// <summary>What both maps' constructors do: validates <paramref name="options"/>, makes the first table and registers
    /// <paramref name="map"/> with the meters. A map whose construction fails has no table and nothing to report: its
    /// finalizer is suppressed.</summary>
    /// <exception cref="NotSupportedException">The key and the value together exceed <see cref="NativeHashTable{TKey, TValue}.MaxEntryBytes"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The initial capacity is negative.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the first table's memory.</exception>
    public static MapSettings<TKey, TValue> Open(NativeMapOptions<TKey>? options, string kind, bool concurrent, IMeteredMap map, out NativeHashTable<TKey, TValue> table)
    {
        MapSettings<TKey, TValue> settings;
        try
        {
            settings = Read(options, kind, concurrent);
            table = settings.NewTable();
        }
        catch
        {
            GC.SuppressFinalize(map);
            throw;
        }
        MapMetrics.Maps.Register(map);
        return settings;
    }

    /// <summary>The leak report of a map the GC found undisposed with <paramref name="table"/> (nothing once it was disposed).</summary>
    public void ReportLeak(NativeHashTable<TKey, TValue>? table)
    {
        if (table is not null) MapMetrics.ReportLeak(Description, table.Count, table.NativeBytes, memoryKept: !Concurrent);
    }

    /// <summary>An empty table at the initial capacity (the map's first, or the one Clear installs).</summary>
    /// <exception cref="OutOfMemoryException">The system refused its memory (nothing is left allocated).</exception>
    public NativeHashTable<TKey, TValue> NewTable(long allocationBudget = long.MaxValue)
        => new(InitialCapacity, Hasher, Description, Concurrent, allocationBudget);
}
