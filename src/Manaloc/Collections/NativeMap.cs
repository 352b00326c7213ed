using System.Collections;
using System.Runtime.CompilerServices;

namespace Manaloc.Collections;

/// <summary>
/// A hash map whose entries live in native memory: <see cref="Dictionary{TKey, TValue}"/>'s members and contract
/// for unmanaged keys and values, with no managed object per entry, and growth one bucket at a time, so no insert
/// rehashes the table and memory never doubles while it grows.
/// </summary>
/// <typeparam name="TKey">An unmanaged key; equality is <see cref="IEquatable{T}.Equals(T)"/>.</typeparam>
/// <typeparam name="TValue">An unmanaged value; the key and the value together take at most 1024 bytes.</typeparam>
/// <remarks>
/// <para>Why: a <c>Dictionary</c> of millions of entries lives in two large arrays that a resize replaces with
/// arrays twice the size (both alive at once, every entry rehashed while the caller waits). Here the entries
/// sit in native buckets of 14 slots, one tag byte per slot compared 16 at a time, and the table grows by linear
/// hashing: past 85% load one bucket is split per insert. The managed footprint is this object and its table's
/// (constant); the garbage collector has nothing to trace. See <c>docs/collections.md</c>.</para>
/// <para>Contract: as <see cref="Dictionary{TKey, TValue}"/>'s: the indexer's get throws
/// <see cref="KeyNotFoundException"/>; an enumerator throws <see cref="InvalidOperationException"/> at its next
/// step once a key was added or the map cleared (removing and overwriting do not invalidate it, as in
/// <c>Dictionary</c>); enumeration order is unspecified. Every member throws <see cref="ObjectDisposedException"/>
/// after <see cref="Dispose"/>; an allocation the system refuses throws <see cref="OutOfMemoryException"/> with the
/// map's entries unchanged.</para>
/// <para>Thread safety: none, as <c>Dictionary</c>: concurrent reads are safe while nothing writes; any write needs
/// exclusive access. Use <see cref="ConcurrentNativeMap{TKey, TValue}"/> for concurrent writers.</para>
/// <para>Dispose it: the native memory is returned only by <see cref="Clear"/> and <see cref="Dispose"/>. A map the
/// GC finds undisposed raises the <c>Leak</c> event (Manaloc's event source) and keeps its memory.</para>
/// </remarks>
public sealed unsafe class NativeMap<TKey, TValue> : IEnumerable<KeyValuePair<TKey, TValue>>, IDisposable, IMeteredMap
    where TKey : unmanaged, IEquatable<TKey>
    where TValue : unmanaged
{
    private NativeHashTable<TKey, TValue>? _table;
    // The table again, for the inlined lookups: _table when the map hashes with the default (no hasher), null when it has a
    // hasher or was disposed. Written with _table (constructor, Clear, Dispose). One load and one null test tell a lookup
    // both that it may hash inline and that the map is not disposed (a test of the hasher field was one more load and
    // branch on every hit).
    private NativeHashTable<TKey, TValue>? _inlineFinds;
    private int _version;
    private readonly MapSettings<TKey, TValue> _settings;

    /// <summary>Creates an empty map with the default options.</summary>
    /// <exception cref="NotSupportedException">The key and the value together exceed 1024 bytes.</exception>
    public NativeMap() : this(null) { }

    /// <summary>Creates an empty map.</summary>
    /// <param name="options">Initial capacity, name and hasher; null for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">The initial capacity is negative.</exception>
    /// <exception cref="NotSupportedException">The key and the value together exceed 1024 bytes.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the first table, or the table for <see cref="NativeMapOptions{TKey}.InitialCapacity"/> is larger than the memory the process may use (nothing allocated).</exception>
    public NativeMap(NativeMapOptions<TKey>? options)
    {
        _settings = MapSettings<TKey, TValue>.Open(options, "NativeMap", concurrent: false, this, out var table);
        SetTable(table);
    }

    /// <summary>Tests: the table the inlined lookup uses (the current one, or null with a hasher or after Dispose).</summary>
    internal NativeHashTable<TKey, TValue>? InlineFindTable => _inlineFinds;

    /// <summary>Tests: the current table, or null after Dispose.</summary>
    internal NativeHashTable<TKey, TValue>? CurrentTable => _table;

    private void SetTable(NativeHashTable<TKey, TValue>? table)
    {
        _table = table;
        _inlineFinds = _settings.Hasher is null ? table : null;
    }

    /// <summary>The leak report of a map never disposed (its memory is kept: see remarks).</summary>
    ~NativeMap()
    {
        _settings.ReportLeak(_table);
    }

    /// <summary>The name from the options.</summary>
    public string Name => _settings.Name;

    /// <summary><c>NativeMap&lt;long, Order&gt; 'orders'</c>: what messages call this map.</summary>
    internal string Description => _settings.Description;

    /// <summary>The number of entries.</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public int Count => (int)Table.Count;

    /// <summary>Native bytes the map holds (buckets, directory, overflow): what the meters report.</summary>
    internal long NativeBytes => _table?.NativeBytes ?? 0;

    /// <summary>Buckets split since the map was created or cleared.</summary>
    internal long Resizes => _table?.Splits ?? 0;

    /// <summary>The table, for tests.</summary>
    internal NativeHashTable<TKey, TValue> Table
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            var table = _table;
            if (table is null) ThrowDisposed();
            return table;
        }
    }

    string IMeteredMap.Kind => "native-map";
    long IMeteredMap.EntryCount => _table?.Count ?? 0;
    long IMeteredMap.NativeBytes => NativeBytes;
    long IMeteredMap.Resizes => Resizes;

    /// <summary>Gets or sets the value of <paramref name="key"/>; setting adds the key or replaces its value.</summary>
    /// <exception cref="KeyNotFoundException">Get: the key is absent.</exception>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">Set: a new key needed memory the system refused; the map is unchanged.</exception>
    public TValue this[TKey key]
    {
        get
        {
            var table = Table;
            byte* entry = table.Find(key);
            if (entry == null) ThrowHelper.ThrowKeyNotFound(key);
            return NativeHashTable<TKey, TValue>.ValueAt(entry);
        }
        set
        {
            var table = Table;
            ulong hash = table.Hash(key);
            byte* entry = table.Find(key, hash, out _);
            if (entry != null)
            {
                NativeHashTable<TKey, TValue>.ValueAt(entry) = value;
                return;
            }
            table.Add(key, hash, value);
            _version++;
        }
    }

    /// <summary>Adds the key with its value if it is absent.</summary>
    /// <returns>True if added; false if the key was present (its value unchanged).</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public bool TryAdd(TKey key, TValue value)
    {
        var table = Table;
        ulong hash = table.Hash(key);
        if (table.Find(key, hash, out _) != null) return false;
        table.Add(key, hash, value);
        _version++;
        return true;
    }

    /// <summary>Gets the value of <paramref name="key"/>.</summary>
    /// <returns>True if the key is present; otherwise false and <paramref name="value"/> is default.</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryGetValue(TKey key, out TValue value)
    {
        var table = _inlineFinds;
        byte* entry = table is not null ? table.Find(key, MapHashing.Hash(key, null), out _) : FindOutOfLine(key);
        if (entry == null)
        {
            value = default;
            return false;
        }
        value = NativeHashTable<TKey, TValue>.ValueAt(entry);
        return true;
    }

    /// <summary>The lookup of a map with a hasher (its delegate call out of every inlined lookup), or of a disposed map (throws).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private byte* FindOutOfLine(TKey key) => Table.Find(key);

    /// <summary>Whether <paramref name="key"/> is present.</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool ContainsKey(TKey key)
    {
        var table = Table;
        return table.Find(key) != null;
    }

    /// <summary>Removes <paramref name="key"/>.</summary>
    /// <returns>True if it was present.</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool Remove(TKey key) => Remove(key, out _);

    /// <summary>Removes <paramref name="key"/> and hands back its value.</summary>
    /// <returns>True if it was present; otherwise false and <paramref name="value"/> is default.</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool Remove(TKey key, out TValue value)
    {
        var table = Table;
        byte* entry = table.Find(key, table.Hash(key), out byte* primary);
        if (entry == null)
        {
            value = default;
            return false;
        }
        value = NativeHashTable<TKey, TValue>.ValueAt(entry);
        table.Remove(primary, entry);
        return true;
    }

    /// <summary>
    /// A reference to the value of <paramref name="key"/>, adding the key with a default value when it is absent: an
    /// update in place with one lookup (<c>CollectionsMarshal.GetValueRefOrAddDefault</c>'s shape).
    /// </summary>
    /// <param name="key">The key.</param>
    /// <param name="exists">True if the key was present; false if this call added it.</param>
    /// <remarks>The reference points into native memory and is valid only until the next change of the map (an
    /// add, a remove, Clear, Dispose): an add may split the bucket and move the entry. Never keep it longer.</remarks>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public ref TValue GetValueRefOrAddDefault(TKey key, out bool exists)
    {
        var table = Table;
        ulong hash = table.Hash(key);
        byte* entry = table.Find(key, hash, out _);
        exists = entry != null;
        if (!exists)
        {
            entry = table.Add(key, hash, default);
            _version++;
        }
        return ref NativeHashTable<TKey, TValue>.ValueAt(entry);
    }

    /// <summary>
    /// A reference to the value of <paramref name="key"/>, or a null reference when it is absent (test with
    /// <see cref="Unsafe.IsNullRef{T}(ref readonly T)"/>); valid as <see cref="GetValueRefOrAddDefault"/>'s.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public ref TValue GetValueRefOrNullRef(TKey key)
    {
        var table = Table;
        byte* entry = table.Find(key);
        if (entry == null) return ref Unsafe.NullRef<TValue>();
        return ref NativeHashTable<TKey, TValue>.ValueAt(entry);
    }

    /// <summary>Removes every entry and gives the native memory back (the map starts again at its initial capacity).</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the new first bucket; the map is unchanged.</exception>
    public void Clear()
    {
        var old = Table;
        // The new table first: if the system refuses it, the map keeps its entries.
        var fresh = _settings.NewTable(old.AllocationBudget);
        SetTable(fresh);
        _version++;
        old.Free();
    }

    /// <summary>Frees the native memory. Afterwards every member throws <see cref="ObjectDisposedException"/>. Idempotent.</summary>
    public void Dispose()
    {
        var table = _table;
        if (table is null) return;
        SetTable(null);
        _version++;
        table.Free();
        MapMetrics.Maps.Unregister(this);
        GC.SuppressFinalize(this);
    }

    /// <summary><c>NativeMap&lt;long, Order&gt; 'orders' (12 entries)</c>, or <c>(disposed)</c>.</summary>
    public override string ToString() => _table is { } table ? $"{Description} ({Plural.Of(table.Count, "entry", "entries")})" : $"{Description} (disposed)";

    /// <summary>An enumerator of the entries, in no particular order.</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public Enumerator GetEnumerator()
    {
        _ = Table;
        return new Enumerator(this);
    }

    IEnumerator<KeyValuePair<TKey, TValue>> IEnumerable<KeyValuePair<TKey, TValue>>.GetEnumerator() => GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <remarks>Its body ends in <c>throw</c>, and it may be inlined: the JIT then knows a call to it never returns, so a lookup
    /// keeps its key and table in registers (behind a call that returns, the JIT stored both to the stack on every lookup).</remarks>
    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private void ThrowDisposed() => throw ThrowHelper.Disposed(Description);

    /// <summary>Enumerates a <see cref="NativeMap{TKey, TValue}"/>'s entries; a struct, so <c>foreach</c> allocates nothing.</summary>
    /// <remarks>Throws <see cref="InvalidOperationException"/> at its next step once a key was added or the map cleared,
    /// and <see cref="ObjectDisposedException"/> once the map was disposed. Not thread-safe.</remarks>
    public struct Enumerator : IEnumerator<KeyValuePair<TKey, TValue>>
    {
        private readonly NativeMap<TKey, TValue> _map;
        private readonly int _version;
        private long _bucketIndex;
        private byte* _bucket;
        private int _slot;
        private KeyValuePair<TKey, TValue> _current;

        internal Enumerator(NativeMap<TKey, TValue> map)
        {
            _map = map;
            _version = map._version;
            _bucketIndex = -1;
            _bucket = null;
            _slot = -1;
            _current = default;
        }

        /// <summary>The entry at the enumerator's position.</summary>
        public readonly KeyValuePair<TKey, TValue> Current => _current;

        /// <summary>The entry, boxed; throws before the first entry and after the last, as <c>Dictionary</c>'s does
        /// (<see cref="Current"/> is default there). On an entry exactly when <c>_slot</c> is a slot (the table's walk
        /// leaves it -1 before the first entry, between buckets and at the end).</summary>
        readonly object IEnumerator.Current
        {
            get
            {
                if (_slot < 0) ThrowHelper.ThrowEnumerationNotOnAnEntry();
                return _current;
            }
        }

        /// <summary>Moves to the next entry.</summary>
        /// <exception cref="InvalidOperationException">A key was added or the map cleared since the enumerator was made.</exception>
        /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
        public bool MoveNext()
        {
            var table = _map.Table;
            if (_map._version != _version) ThrowHelper.ThrowEnumerationChanged();
            if (table.MoveNext(ref _bucketIndex, ref _bucket, ref _slot, out byte* entry))
            {
                _current = new KeyValuePair<TKey, TValue>(Unsafe.ReadUnaligned<TKey>(entry), NativeHashTable<TKey, TValue>.ValueAt(entry));
                return true;
            }
            _current = default;
            return false;
        }

        /// <summary>Back to before the first entry.</summary>
        /// <exception cref="InvalidOperationException">A key was added or the map cleared since the enumerator was made.</exception>
        /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
        public void Reset()
        {
            _ = _map.Table; // throws once disposed (Dispose also changes the version: this check comes first)
            if (_map._version != _version) ThrowHelper.ThrowEnumerationChanged();
            _bucketIndex = -1;
            _bucket = null;
            _slot = -1;
            _current = default;
        }

        /// <summary>Nothing to release.</summary>
        public readonly void Dispose() { }
    }
}
