using System.Buffers;
using System.Collections;
using System.Runtime.CompilerServices;
using Manaloc.Platform;

namespace Manaloc.Collections;

/// <summary>
/// A thread-safe hash map whose entries live in native memory: <see cref="System.Collections.Concurrent.ConcurrentDictionary{TKey, TValue}"/>'s
/// members and contract for unmanaged keys and values, reads without a lock, no managed object per entry, and growth
/// one bucket at a time.
/// </summary>
/// <typeparam name="TKey">An unmanaged key; equality is <see cref="IEquatable{T}.Equals(T)"/>.</typeparam>
/// <typeparam name="TValue">An unmanaged value; the key and the value together take at most 1024 bytes.</typeparam>
/// <remarks>
/// <para>Why: <c>ConcurrentDictionary</c> allocates a node object per entry, so a full collection marks every entry;
/// here entries live in native buckets (the layout and growth of <see cref="NativeMap{TKey, TValue}"/>) and the GC
/// traces nothing per entry. See <c>docs/collections.md</c>.</para>
/// <para>Reads (<see cref="TryGetValue"/>, the indexer's get, <see cref="ContainsKey"/>, the fast path of the
/// <c>GetOrAdd</c>s, enumeration) take no lock and never see a torn value: each bucket chain has a sequence number
/// that a writer makes odd while it changes the chain; a reader copies the value and keeps it only if the sequence
/// was the same even number before and after, so a value written by another thread is seen whole or not at all.
/// Writers take one lock per map (a split touches two buckets in different places, and writes are the rare
/// side of the workloads this map is for); user callbacks (the factories of <c>GetOrAdd</c> and <c>AddOrUpdate</c>)
/// run outside it, and may run more than once for one call, as in <c>ConcurrentDictionary</c>.</para>
/// <para>Reclamation: the GC. Nothing a reader can reach is freed while the map lives, except by <see cref="Clear"/> and
/// <see cref="Dispose"/>, which unpublish the table and release it: a released flag, one process-wide barrier, and its
/// pages given back to the system with their addresses kept readable (zeros) until the table object's finalizer
/// unmaps them, when no read can hold it any more (a read holds the table object until its last check). A read checks
/// the flag (a bit of the table's split state) after its sequence check and, if set, reads the map's table again
/// (Clear's new one) or throws <see cref="ObjectDisposedException"/> (Dispose). So a read racing <see cref="Dispose"/> returns the right answer or
/// throws, a read racing <see cref="Clear"/> returns the old whole value or a miss, and none touches unmapped memory.
/// The cost: per hit one more load of the split state (a word the read loaded at its start) and a test of the flag; a
/// miss re-reads the state for its own check anyway, and the same load serves the flag; per Clear or Dispose one process-wide barrier and no wait.
/// Where pages cannot be discarded (every system but Linux), reads go through <c>ReaderGate</c> and Clear and Dispose
/// free the table once every read in progress has ended. See <c>docs/collections.md</c>.</para>
/// <para>Enumeration is weakly consistent, as <c>ConcurrentDictionary</c>'s: it takes no lock, may or may not show
/// changes made during it, never throws for them, and never shows an entry twice (it walks the hash space in an order
/// that splits preserve). It copies one bucket chain at a time into an array rented from <see cref="ArrayPool{T}.Shared"/>,
/// returned by the enumerator's <c>Dispose</c> (which <c>foreach</c> calls).</para>
/// <para><see cref="TryUpdate"/> and <see cref="TryRemove(KeyValuePair{TKey, TValue})"/> compare values with
/// <see cref="EqualityComparer{T}.Default"/>: give <typeparamref name="TValue"/> <see cref="IEquatable{T}"/> so it does
/// not box. Dispose it: a map the GC finds undisposed raises the <c>Leak</c> event (its table's finalizer then gives the memory back).</para>
/// </remarks>
public sealed unsafe class ConcurrentNativeMap<TKey, TValue> : IEnumerable<KeyValuePair<TKey, TValue>>, IDisposable, IMeteredMap
    where TKey : unmanaged, IEquatable<TKey>
    where TValue : unmanaged
{
    // Replaced by Clear, null after Dispose, both under _writeLock; readers load it with Volatile.Read and hold the reference
    // while they read through it (see the remarks of the type and NativeHashTable.ReleaseUnderReaders).
    private NativeHashTable<TKey, TValue>? _table;
    // The table again, for the inlined read: _table when the map hashes with the default (no hasher), null when it has a
    // hasher or was disposed. Written after _table, under _writeLock, by the constructor, Clear and Dispose. One load and
    // one null test tell a read both that it may go inline and that the map is not disposed (a test of the hasher field
    // was one more load and branch on every hit). A read that loads a table Clear or Dispose just replaced sees it released
    // and retries through _table, as a read of _table itself would.
    private NativeHashTable<TKey, TValue>? _inlineReads;
    // Monitor, not System.Threading.Lock: Coyote controls Monitor, so the schedules explore the writers' interleavings.
    private readonly object _writeLock = new();
    private readonly MapSettings<TKey, TValue> _settings;
    private readonly Func<TKey, ulong>? _hasher;

    /// <summary>Creates an empty map with the default options.</summary>
    /// <exception cref="NotSupportedException">The key and the value together exceed 1024 bytes.</exception>
    public ConcurrentNativeMap() : this(null) { }

    /// <summary>Creates an empty map.</summary>
    /// <param name="options">Initial capacity, name and hasher; null for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">The initial capacity is negative.</exception>
    /// <exception cref="NotSupportedException">The key and the value together exceed 1024 bytes.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the first table, or the table for <see cref="NativeMapOptions{TKey}.InitialCapacity"/> is larger than the memory the process may use (nothing allocated).</exception>
    public ConcurrentNativeMap(NativeMapOptions<TKey>? options)
    {
        _settings = MapSettings<TKey, TValue>.Open(options, "ConcurrentNativeMap", concurrent: true, this, out var table);
        _table = table;
        _hasher = _settings.Hasher;
        _inlineReads = _hasher is null ? table : null;
    }

    /// <summary>The leak report of a map never disposed (its memory is kept).</summary>
    ~ConcurrentNativeMap()
    {
        _settings.ReportLeak(_table);
    }

    /// <summary>The name from the options.</summary>
    public string Name => _settings.Name;

    /// <summary><c>ConcurrentNativeMap&lt;long, Order&gt; 'orders'</c>: what messages call this map.</summary>
    internal string Description => _settings.Description;

    /// <summary>The number of entries (exact: writers are serialised, and each publishes the count after its change).</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public int Count => (int)CurrentTable.Count;

    /// <summary>Whether the map is empty.</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool IsEmpty => CurrentTable.Count == 0;

    /// <summary>Native bytes the map holds: what the meters report.</summary>
    internal long NativeBytes => Volatile.Read(ref _table)?.NativeBytes ?? 0;

    /// <summary>Buckets split since the map was created or cleared.</summary>
    internal long Resizes => Volatile.Read(ref _table)?.Splits ?? 0;

    string IMeteredMap.Kind => "concurrent-native-map";
    long IMeteredMap.EntryCount => Volatile.Read(ref _table)?.Count ?? 0;
    long IMeteredMap.NativeBytes => NativeBytes;
    long IMeteredMap.Resizes => Resizes;

    /// <summary>The table for a counter read (managed fields only).</summary>
    private NativeHashTable<TKey, TValue> CurrentTable
    {
        get
        {
            var table = Volatile.Read(ref _table);
            if (table is null) ThrowDisposed();
            return table;
        }
    }

    /// <summary>Tests: the table the inlined read loads (the current one, or null with a hasher or after Dispose).</summary>
    internal NativeHashTable<TKey, TValue>? InlineReadTable => Volatile.Read(ref _inlineReads);

    /// <summary>The table, for a writer holding <see cref="_writeLock"/> (and for tests).</summary>
    internal NativeHashTable<TKey, TValue> WriterTable
    {
        get
        {
            var table = _table;
            if (table is null) ThrowDisposed();
            return table;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ulong Hash(TKey key) => MapHashing.Hash(key, _hasher);

    /// <summary>Gets the value of <paramref name="key"/>, without a lock.</summary>
    /// <returns>True if the key is present; otherwise false and <paramref name="value"/> is default.</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed (also when Dispose raced this read).</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    [SkipLocalsInit] // the retry's local is written by the call before it is read: zeroing it cost every inlined hit three stores
    public bool TryGetValue(TKey key, out TValue value)
    {
        if (MapHashing.HasRuntimeEquality<TKey>())
        {
            // One attempt inlined into the caller, for keys whose equality and hash are the runtime's own (a custom hasher
            // or equality is user code: the out-of-line path keeps it out of every call site). A map with a hasher (no
            // inline table), a disposed map, a writer in the chain, or a table released under the read (Clear, Dispose) go
            // to the retry loop.
            if (PageBlocks.CanDiscard)
            {
                // No gate: a released table stays mapped while this reference holds it (see the type's remarks), and the
                // attempt's last check, the released flag, is a use of the reference after its last native load. Null: a
                // hasher, or disposed.
                var table = Volatile.Read(ref _inlineReads);
                if (table is not null)
                {
                    int outcome = table.TryGetConcurrentOnce(key, MapHashing.Hash(key, null), out value);
                    GC.KeepAlive(table);
                    // A hit first: one test on its path (the JIT does not fold the outcome into the attempt's checks; >= 0 then
                    // == 1 tested it twice).
                    if (outcome > 0) return true;
                    if (outcome == 0) return false;
                }
            }
            else
            {
                // Where pages cannot be discarded, Clear and Dispose free the table once every read has left the gate.
                // Nothing between Enter and Exit can throw (runtime equality, native loads the gate keeps alive), so no
                // finally. The hash is taken after Enter, which calls the runtime's thread-local resolver: a hash taken
                // before would be stored to the stack across that call.
                var gate = ReaderGate.Enter();
                var table = Volatile.Read(ref _inlineReads);
                int outcome = -1;
                value = default;
                if (table is not null) outcome = table.TryGetConcurrentOnce(key, MapHashing.Hash(key, null), out value);
                ReaderGate.Exit(gate);
                if (outcome >= 0) return outcome == 1;
            }
        }
        // Through a local of its own: the call takes its address, and taking the caller's would keep the caller's value in
        // memory on the inlined path too (each hit stored and reloaded it).
        bool found = TryGetValueRetrying(key, out TValue retried);
        value = retried;
        return found;
    }

    /// <summary>The read's retry loop, out of line: for keys whose equality is user code, and for retries (a writer in the
    /// chain, a table released under the read: each attempt reads the map's table again).</summary>
    /// <remarks>It takes the hash itself (a custom hasher's delegate call included): the inlined read then has one call site
    /// outside its hit, not two, and fewer values for a caller's loop to keep across calls (in the lab's lookup loop, with
    /// the cheaper bucket index, the hit no longer stores the key and the map to the stack).</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryGetValueRetrying(TKey key, out TValue value)
    {
        var lookup = new Lookup(key, Hash(key));
        ReadRetrying(ref lookup);
        value = lookup.Value;
        return lookup.Outcome == 1;
    }

    /// <summary>One lock-free read of the map's current table: <see cref="TryOnce"/> returns false to be tried again (a writer
    /// was in the chain, or the table was released under it), on the map's table as it then is.</summary>
    private interface IReadAttempt
    {
        bool TryOnce(NativeHashTable<TKey, TValue> table);
    }

    /// <summary>
    /// The lock-free reads' retry loop, shared by the out-of-line lookup, AddOrUpdate's read and the enumerator: each
    /// attempt inside the reader gate where pages cannot be discarded (on Linux, none: a released table stays mapped while
    /// the reference this loop holds keeps it reachable), on the table read afresh (Clear's new one after a release;
    /// <see cref="ObjectDisposedException"/> after Dispose), spinning between attempts.
    /// </summary>
    /// <remarks>Generic over a struct attempt, so each caller gets its own compiled loop with the attempt inlined and no
    /// delegate. The inlined hit of <see cref="TryGetValue"/> does not come here: only its retries and the lookups of keys
    /// with user-code equality or a custom hasher do.</remarks>
    private void ReadRetrying<TAttempt>(ref TAttempt attempt) where TAttempt : struct, IReadAttempt
    {
        var spin = new SpinWait();
        while (true)
        {
            bool done;
            var gate = PageBlocks.CanDiscard ? null : ReaderGate.Enter();
            try
            {
                var table = Volatile.Read(ref _table);
                if (table is null) ThrowDisposed();
                done = attempt.TryOnce(table);
                // The attempt's last check is a load from the table object after its last native load; this keeps the
                // reference alive to here whatever the attempt's code becomes.
                GC.KeepAlive(table);
            }
            finally
            {
                if (gate is not null) ReaderGate.Exit(gate);
            }
            if (done) return;
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    /// <summary>A lookup's attempt: <see cref="Outcome"/> 1 found (<see cref="Value"/> whole), 0 absent.</summary>
    private struct Lookup(TKey key, ulong hash) : IReadAttempt
    {
        public TValue Value;
        public int Outcome;

        public bool TryOnce(NativeHashTable<TKey, TValue> table)
        {
            Outcome = table.TryGetConcurrentOnce(key, hash, out Value);
            return Outcome >= 0;
        }
    }

    /// <summary>Whether <paramref name="key"/> is present, without a lock.</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool ContainsKey(TKey key) => TryGetValue(key, out _);

    /// <summary>Gets or sets the value of <paramref name="key"/>; setting adds the key or replaces its value.</summary>
    /// <exception cref="KeyNotFoundException">Get: the key is absent.</exception>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">Set: the system refused memory; the map is unchanged.</exception>
    public TValue this[TKey key]
    {
        get
        {
            if (!TryGetValue(key, out TValue value)) ThrowHelper.ThrowKeyNotFound(key);
            return value;
        }
        set
        {
            ulong hash = Hash(key);
            lock (_writeLock)
            {
                var table = WriterTable;
                byte* entry = table.Find(key, hash, out byte* primary);
                if (entry != null) table.Replace(primary, entry, value);
                else table.Add(key, hash, value);
            }
        }
    }

    /// <summary>Adds the key with its value if it is absent.</summary>
    /// <returns>True if added; false if the key was present (its value unchanged).</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public bool TryAdd(TKey key, TValue value)
    {
        ulong hash = Hash(key);
        lock (_writeLock)
        {
            var table = WriterTable;
            if (table.Find(key, hash, out _) != null) return false;
            table.Add(key, hash, value);
            return true;
        }
    }

    /// <summary>The value of <paramref name="key"/>, adding <paramref name="value"/> first if the key is absent.</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public TValue GetOrAdd(TKey key, TValue value)
    {
        if (TryGetValue(key, out TValue existing)) return existing;
        return AddOrGetExisting(key, Hash(key), value);
    }

    /// <summary>The value of <paramref name="key"/>, adding <paramref name="valueFactory"/>'s value first if the key is absent.</summary>
    /// <remarks>The factory runs outside the map's lock, so it may run on several threads for one key; one value wins.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="valueFactory"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public TValue GetOrAdd(TKey key, Func<TKey, TValue> valueFactory)
    {
        if (valueFactory is null) ThrowHelper.ThrowArgumentNull(nameof(valueFactory));
        if (TryGetValue(key, out TValue existing)) return existing;
        return AddOrGetExisting(key, Hash(key), valueFactory(key));
    }

    /// <summary>As <see cref="GetOrAdd(TKey, Func{TKey, TValue})"/>, with an argument for the factory (no closure).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="valueFactory"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public TValue GetOrAdd<TArg>(TKey key, Func<TKey, TArg, TValue> valueFactory, TArg factoryArgument)
    {
        if (valueFactory is null) ThrowHelper.ThrowArgumentNull(nameof(valueFactory));
        if (TryGetValue(key, out TValue existing)) return existing;
        return AddOrGetExisting(key, Hash(key), valueFactory(key, factoryArgument));
    }

    private TValue AddOrGetExisting(TKey key, ulong hash, TValue value)
    {
        lock (_writeLock)
        {
            var table = WriterTable;
            byte* entry = table.Find(key, hash, out _);
            if (entry != null) return Unsafe.ReadUnaligned<TValue>(entry + sizeof(TKey));
            table.Add(key, hash, value);
            return value;
        }
    }

    /// <summary>Adds <paramref name="addValue"/> if the key is absent, or replaces its value with <paramref name="updateValueFactory"/>'s.</summary>
    /// <returns>The value the key has after the call.</returns>
    /// <remarks>The factory runs outside the map's lock and is called again if another thread changed the value meanwhile.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="updateValueFactory"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public TValue AddOrUpdate(TKey key, TValue addValue, Func<TKey, TValue, TValue> updateValueFactory)
    {
        if (updateValueFactory is null) ThrowHelper.ThrowArgumentNull(nameof(updateValueFactory));
        // Static lambdas and a tuple argument: no closure, nothing allocated.
        return AddOrUpdate(key, static (_, a) => a.addValue, static (k, v, a) => a.updateValueFactory(k, v), (addValue, updateValueFactory));
    }

    /// <summary>Adds <paramref name="addValueFactory"/>'s value if the key is absent, or replaces its value with <paramref name="updateValueFactory"/>'s.</summary>
    /// <returns>The value the key has after the call.</returns>
    /// <remarks>The factories run outside the map's lock and may run more than once for one call.</remarks>
    /// <exception cref="ArgumentNullException">A factory is null.</exception>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public TValue AddOrUpdate(TKey key, Func<TKey, TValue> addValueFactory, Func<TKey, TValue, TValue> updateValueFactory)
    {
        if (addValueFactory is null) ThrowHelper.ThrowArgumentNull(nameof(addValueFactory));
        if (updateValueFactory is null) ThrowHelper.ThrowArgumentNull(nameof(updateValueFactory));
        return AddOrUpdate(key, static (k, a) => a.addValueFactory(k), static (k, v, a) => a.updateValueFactory(k, v), (addValueFactory, updateValueFactory));
    }

    /// <summary>As <see cref="AddOrUpdate(TKey, Func{TKey, TValue}, Func{TKey, TValue, TValue})"/>, with an argument for the factories (no closure).</summary>
    /// <exception cref="ArgumentNullException">A factory is null.</exception>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused memory; the map is unchanged.</exception>
    public TValue AddOrUpdate<TArg>(TKey key, Func<TKey, TArg, TValue> addValueFactory, Func<TKey, TValue, TArg, TValue> updateValueFactory, TArg factoryArgument)
    {
        if (addValueFactory is null) ThrowHelper.ThrowArgumentNull(nameof(addValueFactory));
        if (updateValueFactory is null) ThrowHelper.ThrowArgumentNull(nameof(updateValueFactory));
        ulong hash = Hash(key);
        while (true)
        {
            if (TryGetForUpdate(key, hash, out TValue current, out var read))
            {
                TValue updated = updateValueFactory(key, current, factoryArgument);
                if (TryReplaceIfUnchanged(key, hash, updated, read)) return updated;
            }
            else
            {
                TValue added = addValueFactory(key, factoryArgument);
                if (TryAddHashed(key, hash, added)) return added;
            }
        }
    }

    private bool TryAddHashed(TKey key, ulong hash, TValue value)
    {
        lock (_writeLock)
        {
            var table = WriterTable;
            if (table.Find(key, hash, out _) != null) return false;
            table.Add(key, hash, value);
            return true;
        }
    }

    /// <summary>Where AddOrUpdate's value was read: the table, the key's chain and the even sequence that validated the read.</summary>
    private readonly struct ReadVersion(NativeHashTable<TKey, TValue> table, byte* primary, uint sequence)
    {
        public readonly NativeHashTable<TKey, TValue> Table = table;
        public readonly byte* Primary = primary;
        public readonly uint Sequence = sequence;
    }

    /// <summary>AddOrUpdate's lock-free read: the value and where it was read, for <see cref="TryReplaceIfUnchanged"/>.</summary>
    private bool TryGetForUpdate(TKey key, ulong hash, out TValue value, out ReadVersion read)
    {
        var lookup = new VersionedLookup(key, hash);
        ReadRetrying(ref lookup);
        value = lookup.Value;
        read = lookup.Read;
        return lookup.Outcome == 1;
    }

    /// <summary>AddOrUpdate's attempt: a lookup that also keeps where it read (<see cref="Read"/>).</summary>
    private struct VersionedLookup(TKey key, ulong hash) : IReadAttempt
    {
        public TValue Value;
        public ReadVersion Read;
        public int Outcome;

        public bool TryOnce(NativeHashTable<TKey, TValue> table)
        {
            Outcome = table.TryGetConcurrentOnce(key, hash, out Value, out byte* primary, out uint sequence);
            Read = new ReadVersion(table, primary, sequence);
            return Outcome >= 0;
        }
    }

    /// <summary>Replaces the value if no writer changed the key's chain since <paramref name="read"/> (AddOrUpdate's check).</summary>
    /// <remarks>Why the chain's sequence and not the value's bytes: a struct's padding bytes are not part of its value, and
    /// a copy the JIT makes field by field need not keep them, so comparing bytes could fail on equal values on every
    /// attempt (a retry that never ends); an equality call would box or run user code under the lock. The ordering
    /// argument is <see cref="NativeHashTable{TKey, TValue}.IsUnchangedSince"/>'s: the read saw the chain whole at an even
    /// sequence, and the same sequence under the lock means no writer has touched the chain since, so the entry still
    /// holds exactly the value the factory was given. The same table object rules out a table that Clear swapped in
    /// (the old one may be freed and its addresses reused: the reference, held here, is not). A write to another key
    /// of the same chain also fails the check: the factory then runs again, as ConcurrentDictionary allows.</remarks>
    private bool TryReplaceIfUnchanged(TKey key, ulong hash, TValue value, in ReadVersion read)
    {
        lock (_writeLock)
        {
            var table = WriterTable;
            if (!ReferenceEquals(table, read.Table) || !table.IsUnchangedSince(hash, read.Primary, read.Sequence)) return false;
            byte* entry = table.Find(key, hash, out byte* primary);
            if (entry == null) return false;
            table.Replace(primary, entry, value);
            return true;
        }
    }

    /// <summary>Replaces the value of <paramref name="key"/> with <paramref name="newValue"/> if it equals <paramref name="comparisonValue"/>.</summary>
    /// <returns>True if replaced.</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool TryUpdate(TKey key, TValue newValue, TValue comparisonValue)
    {
        ulong hash = Hash(key);
        lock (_writeLock)
        {
            var table = WriterTable;
            byte* entry = table.Find(key, hash, out byte* primary);
            if (entry == null || !EqualityComparer<TValue>.Default.Equals(Unsafe.ReadUnaligned<TValue>(entry + sizeof(TKey)), comparisonValue)) return false;
            table.Replace(primary, entry, newValue);
            return true;
        }
    }

    /// <summary>Removes <paramref name="key"/> and hands back its value.</summary>
    /// <returns>True if it was present; otherwise false and <paramref name="value"/> is default.</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool TryRemove(TKey key, out TValue value)
    {
        ulong hash = Hash(key);
        lock (_writeLock)
        {
            var table = WriterTable;
            byte* entry = table.Find(key, hash, out byte* primary);
            if (entry == null)
            {
                value = default;
                return false;
            }
            value = Unsafe.ReadUnaligned<TValue>(entry + sizeof(TKey));
            table.Remove(primary, entry);
            return true;
        }
    }

    /// <summary>Removes the entry if the key has exactly this value.</summary>
    /// <returns>True if removed.</returns>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool TryRemove(KeyValuePair<TKey, TValue> item)
    {
        ulong hash = Hash(item.Key);
        lock (_writeLock)
        {
            var table = WriterTable;
            byte* entry = table.Find(item.Key, hash, out byte* primary);
            if (entry == null || !EqualityComparer<TValue>.Default.Equals(Unsafe.ReadUnaligned<TValue>(entry + sizeof(TKey)), item.Value)) return false;
            table.Remove(primary, entry);
            return true;
        }
    }

    /// <summary>Removes <paramref name="key"/> (as <see cref="TryRemove(TKey, out TValue)"/>).</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool Remove(TKey key) => TryRemove(key, out _);

    /// <summary>Removes <paramref name="key"/> and hands back its value (as <see cref="TryRemove(TKey, out TValue)"/>).</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public bool Remove(TKey key, out TValue value) => TryRemove(key, out value);

    /// <summary>Removes every entry and gives the native memory back.</summary>
    /// <remarks>Readers that started before see the old entries or the empty map; none touches unmapped memory.</remarks>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the new first bucket; the map is unchanged.</exception>
    public void Clear()
    {
        NativeHashTable<TKey, TValue>? old;
        lock (_writeLock)
        {
            old = _table;
            if (old is null) ThrowDisposed();
            // A new table for the old: if the system refuses its first bucket, the old one stays. Release: the new table's
            // initialised memory before a reader can load the reference.
            var fresh = _settings.NewTable(old.AllocationBudget);
            Volatile.Write(ref _table, fresh);
            if (_hasher is null) Volatile.Write(ref _inlineReads, fresh);
        }
        Reclaim(old);
    }

    /// <summary>Gives the native memory back. Afterwards every member throws <see cref="ObjectDisposedException"/>, and so
    /// does a read that raced it and read the released table. Thread-safe and idempotent.</summary>
    public void Dispose()
    {
        NativeHashTable<TKey, TValue>? old;
        lock (_writeLock)
        {
            old = _table;
            if (old is null) return;
            Volatile.Write(ref _table, null);
            Volatile.Write(ref _inlineReads, null);
        }
        Reclaim(old);
        MapMetrics.Maps.Unregister(this);
        GC.SuppressFinalize(this);
    }

    /// <summary>Gives back a table that Clear or Dispose unpublished (readers may still be inside it): its pages discarded at
    /// once and its addresses unmapped by its finalizer (<see cref="NativeHashTable{TKey, TValue}.ReleaseUnderReaders"/>); where pages
    /// cannot be discarded, freed once every read in progress has left the reader gate.</summary>
    private static void Reclaim(NativeHashTable<TKey, TValue> old)
    {
        if (PageBlocks.CanDiscard)
        {
            old.ReleaseUnderReaders();
            return;
        }
        ReaderGate.WaitForReaders();
        old.Free();
    }

    /// <summary><c>ConcurrentNativeMap&lt;long, Order&gt; 'orders' (12 entries)</c>, or <c>(disposed)</c>.</summary>
    public override string ToString()
        => Volatile.Read(ref _table) is { } table ? $"{Description} ({Plural.Of(table.Count, "entry", "entries")})" : $"{Description} (disposed)";

    /// <summary>A weakly consistent enumerator of the entries (see remarks of the type).</summary>
    /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
    public Enumerator GetEnumerator()
    {
        _ = CurrentTable;
        return new Enumerator(this);
    }

    IEnumerator<KeyValuePair<TKey, TValue>> IEnumerable<KeyValuePair<TKey, TValue>>.GetEnumerator() => GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed() => ThrowHelper.ThrowDisposed(Description);

    /// <summary>One bucket chain's entries at or after <paramref name="position"/>, read as a lookup is (from the map's
    /// current table, again if Clear released the one it read).</summary>
    private int Snapshot(ulong position, KeyValuePair<TKey, TValue>[] buffer, out ulong end, out int needed)
    {
        var snapshot = new ChainSnapshot(position, buffer);
        ReadRetrying(ref snapshot);
        end = snapshot.End;
        needed = snapshot.Needed;
        return snapshot.Count;
    }

    /// <summary>The enumerator's attempt: one chain copied (<see cref="NativeHashTable{TKey, TValue}.SnapshotConcurrent"/>,
    /// which retries a writer's interference itself); tried again only on a released table.</summary>
    private struct ChainSnapshot(ulong position, KeyValuePair<TKey, TValue>[] buffer) : IReadAttempt
    {
        public int Count;
        public ulong End;
        public int Needed;

        public bool TryOnce(NativeHashTable<TKey, TValue> table)
        {
            Count = table.SnapshotConcurrent(position, buffer, out End, out Needed);
            return Count != NativeHashTable<TKey, TValue>.SnapshotOfReleased;
        }
    }

    /// <summary>Enumerates a <see cref="ConcurrentNativeMap{TKey, TValue}"/>'s entries, weakly consistently, one bucket chain at a time.</summary>
    /// <remarks>Dispose it (<c>foreach</c> does) to return its buffer to <see cref="ArrayPool{T}.Shared"/>. One enumerator is for one thread.</remarks>
    public struct Enumerator : IEnumerator<KeyValuePair<TKey, TValue>>
    {
        private readonly ConcurrentNativeMap<TKey, TValue> _map;
        private KeyValuePair<TKey, TValue>[]? _buffer;
        private int _index;
        private int _count;
        private ulong _position;
        private bool _finished;
        private KeyValuePair<TKey, TValue> _current;

        internal Enumerator(ConcurrentNativeMap<TKey, TValue> map)
        {
            _map = map;
            _buffer = null;
            _index = _count = 0;
            _position = 0;
            _finished = false;
            _current = default;
        }

        /// <summary>The entry at the enumerator's position.</summary>
        public readonly KeyValuePair<TKey, TValue> Current => _current;

        readonly object IEnumerator.Current => _current;

        /// <summary>Moves to the next entry.</summary>
        /// <exception cref="ObjectDisposedException">The map was disposed.</exception>
        public bool MoveNext()
        {
            while (true)
            {
                if (_index < _count)
                {
                    _current = _buffer![_index++];
                    return true;
                }
                if (_finished)
                {
                    _current = default;
                    return false;
                }
                _buffer ??= ArrayPool<KeyValuePair<TKey, TValue>>.Shared.Rent(32);
                int count = _map.Snapshot(_position, _buffer, out ulong end, out int needed);
                if (count < 0)
                {
                    ArrayPool<KeyValuePair<TKey, TValue>>.Shared.Return(_buffer);
                    _buffer = ArrayPool<KeyValuePair<TKey, TValue>>.Shared.Rent(needed);
                    continue;
                }
                _index = 0;
                _count = count;
                if (end == 0) _finished = true;
                else _position = end;
            }
        }

        /// <summary>Back to the start.</summary>
        public void Reset()
        {
            _index = _count = 0;
            _position = 0;
            _finished = false;
            _current = default;
        }

        /// <summary>Returns the buffer to the array pool.</summary>
        public void Dispose()
        {
            if (_buffer is { } buffer)
            {
                _buffer = null;
                ArrayPool<KeyValuePair<TKey, TValue>>.Shared.Return(buffer);
            }
            _index = _count = 0;
            _finished = true;
        }
    }
}
