using System.Collections;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// N records of interface <typeparamref name="T"/> side by side in one native block, with no managed object per record.
/// Read them as a list (the indexer, <c>foreach</c>, LINQ: each item stays on its record) or scan them with one moving
/// view (<see cref="Scan"/>, <see cref="MoveTo"/>: no allocation).
/// </summary>
/// <typeparam name="T">The record interface.</typeparam>
/// <remarks>
/// <para>Why: each <see cref="TypeAllocator.New{T}"/> returns a managed handle the GC still sees; for millions of records
/// that is millions of objects to mark. Here the GC sees this object and one view, whatever the length. Reading and
/// writing a record's properties goes straight to native memory, with the layout <see cref="TypeAllocator.New{T}"/> uses.
/// Memory is zeroed at creation.</para>
/// <para>Two ways in. <b>Items</b>: the indexer and <c>foreach</c> (and so LINQ, through <see cref="IReadOnlyList{T}"/>)
/// hand out an item per record, an object bound to that record for life: save it, put it in a list, compare it (two items of
/// one record are <see cref="object.Equals(object)"/>), and it still reads and writes that record. The cost: each item is a
/// new 40-byte managed object with one reference (to the array's chunk); the array keeps none, so items dropped at once are
/// cheap gen-0 garbage and the live set still costs the collector nothing, but items kept are objects the collector
/// traces, what this type exists to avoid: keep indexes rather than millions of items. <b>The moving view</b>:
/// <c>foreach (var r in array.Scan())</c>, <see cref="View"/> with <see cref="MoveTo"/>, or <see cref="CreateView"/>: one
/// object shown each record in turn, allocation-free, the fast path for a bulk scan. After <c>MoveTo(j)</c> a reference taken
/// at <c>MoveTo(i)</c> sees record j: never save the view or hand it to code that keeps it.</para>
/// <para>Checks. An item of a checked allocator's array compares the array's stamp on each access (two dependent loads:
/// the chunk reference and its stamp), with nothing tracked, so an item used after the array's Dispose (or the allocator's)
/// throws, whenever that was. A view checks disposal once per move, not per access: <see cref="MoveTo"/> and the scan
/// enumerator compare the array's stamp, and in checked mode <see cref="Dispose"/> also nulls every view's address, which
/// the view's accessors test (the address is loaded for the access anyway). In unchecked mode neither items nor views are
/// checked on access: one used after Dispose reads and writes the dead array, whose memory stays while it is referenced
/// (never another array's memory); the indexer, the enumerators and <see cref="MoveTo"/> still refuse a disposed array in
/// both modes.</para>
/// <para>Thread safety: the records may be read and written from several threads (natural alignment, no atomicity beyond
/// one property); an item, like a handle from New, may be shared between threads. The array's own moving view is per
/// thread: each thread that calls <see cref="MoveTo"/>, <see cref="View"/> or <see cref="Scan"/> gets a view of its own on
/// its first call (held by the array, not by the thread), so concurrent requests that each call <see cref="MoveTo"/> read
/// their own records. The cost of finding the calling thread's view is the same on every thread, the creator or not: each
/// thread remembers the array whose view it used last (its key and a weak handle to the view, in thread-statics), so a
/// move checks one thread-static compare and loads the view through the handle, inlined (no lock, no allocation after its
/// first call); moving another array in between costs one lookup in the array's table (not inlined); a <see cref="Scan"/>
/// loop finds it once, not per record. A view still must not be kept across a move on its thread, nor across an
/// <c>await</c> (the continuation may run on another thread, and the first thread's view is moved by whatever runs there
/// next). A <see cref="CreateView"/> view is the caller's alone: one per thread. Dispose may race
/// readers and writers on other threads: they see the dead array or an exception, never memory handed to someone else
/// (see <see cref="Dispose"/>).</para>
/// </remarks>
public sealed unsafe class RecordArray<T> : IReadOnlyList<T>, IDisposable, IRecordArray where T : class
{
    private readonly NativeSlabAllocator _slab;
    private readonly byte* _base;
    private readonly nint _stride;
    private readonly SlabChunk _chunk;
    private readonly uint _generation;
    private readonly RecordType _record;
    // This array's key in the threads' one-entry caches (ThreadKeys.ViewArray): unique, never reused, at least 1; set to
    // RetiredKey by the views table's finalizer, before it frees the handles, so a resurrected array never reads them.
    private long _key;
    // The threads' views: an entry per ThreadIndex that used the array's view, each with the key of the thread that owns it
    // and a weak handle to the view (see ThreadView for the ownership and memory-ordering argument). Made on the first
    // use of the view; written under _viewsLock only; read without it.
    private ThreadViewTable? _views;
    private readonly TypeAllocator _owner;
    // The items' class, resolved on the first item (a scan-only program never generates it): the checked item class, or in
    // an unchecked allocator the view's own class (bare accessors either way). Benign race: every thread resolves the same.
    private RecordType? _itemRecord;
    private readonly Lock _viewsLock = new();
    // Views from CreateView, weakly: a long-lived array must not keep every view ever made. Guarded by _viewsLock.
    private List<WeakReference<NativeRecordView>>? _otherViews;
    private int _pruneAt = 16;
    private bool _viewsInvalidated;

    internal RecordArray(TypeAllocator owner, NativeSlabAllocator slab, RecordType record, byte* block, int length, SlabChunk chunk, uint generation)
    {
        _owner = owner;
        _slab = slab;
        _record = record;
        _base = block;
        Length = length;
        // At least 1: the enumerator walks addresses up to base + Length × stride, so a record with no fields (size 0)
        // still steps (nothing is ever read through its address). NewArray sizes the block the same way.
        _stride = Math.Max(record.Layout.Size, 1);
        _chunk = chunk;
        _generation = generation;
        _key = ThreadKeys.NextArrayKey();
    }

    /// <summary>Records in the array.</summary>
    public int Length { get; }

    /// <summary>Records in the array (<see cref="Length"/>).</summary>
    int IReadOnlyCollection<T>.Count => Length;

    /// <summary>Bytes from one record to the next: the layout's size (1 for a record with no fields).</summary>
    public int Stride => (int)_stride;

    /// <summary>True until <see cref="Dispose"/> (or the allocator's Dispose).</summary>
    public bool IsAllocated => _chunk.DedicatedStamp == _generation;

    /// <summary>An item bound to record <paramref name="index"/>: it reads and writes that record for as long as it is kept.</summary>
    /// <remarks>Each call makes a new 40-byte object (items of one record are equal, not the same object); for a loop that
    /// allocates nothing use <see cref="Scan"/> or <see cref="MoveTo"/>. In a checked allocator the item throws once the array
    /// (or its allocator) is disposed; in an unchecked one it then reads and writes the dead array. Thread-safe.</remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is outside [0, Length).</exception>
    /// <exception cref="ObjectDisposedException">The array or its allocator was disposed.</exception>
    public T this[int index]
    {
        get
        {
            if ((uint)index >= (uint)Length) ThrowHelper.ThrowIndexOutOfRange(index, Length);
            return ItemAt(_base + index * _stride);
        }
    }

    /// <summary>The array's moving view for the calling thread, positioned by <see cref="MoveTo"/> and by <see cref="Scan"/>'s
    /// loop on this thread.</summary>
    /// <remarks>One object for every record: it shows whichever record it was last moved to, so a reference kept across a
    /// move sees the new record. Do not save it; use the indexer for an object that stays on its record. Each thread has its
    /// own (made on the thread's first call), so another thread's moves
    /// never show here. Before the thread's first <see cref="MoveTo"/> it is at record 0. For an empty array (Length 0) that
    /// is a zeroed scratch record the array owns (its block always holds one record), so a stray access cannot reach another
    /// block.</remarks>
    /// <exception cref="ObjectDisposedException">The array was disposed before this thread's first use of its view.</exception>
    public T View => Unsafe.As<T>(ThreadView());

    /// <summary>Moves <see cref="View"/>, the calling thread's moving view of the array, to record <paramref name="index"/>
    /// and returns it.</summary>
    /// <remarks>Allocates nothing (but a thread's first call, which makes that thread's view): the fast path for visiting
    /// records by index. Beyond a <see cref="CreateView"/> view's move, it finds the calling thread's view: one thread-static
    /// compare and a load through a handle, on any thread, when the thread's last use of an array's view was this array's
    /// (see the class remarks). The object returned is the same for every index on one thread (the view moves): do not
    /// save it, nor keep it across an <c>await</c>; use the indexer for an object that stays on its record. Threads do not
    /// share it: concurrent callers each read the record they moved to.</remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is outside [0, Length).</exception>
    /// <exception cref="ObjectDisposedException">The array or its allocator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public T MoveTo(int index)
    {
        // The thread's cache first, before the checks that may throw: in a loop of moves the JIT then hoists the helper
        // call that finds the thread-static block out of the loop (it hoists only from the loop's first block).
        long cachedArray = ThreadKeys.ViewArray;
        nint cachedView = ThreadKeys.ViewHandle;
        if ((uint)index >= (uint)Length) ThrowHelper.ThrowIndexOutOfRange(index, Length);
        if (_chunk.DedicatedStamp != _generation) throw DisposedException(_chunk); // do not point the view at a disposed array
        var view = ThreadView(cachedArray, cachedView);
        view.Address = _base + index * _stride;
        return Unsafe.As<T>(view);
    }

    /// <summary>The calling thread's view: from the thread's one-entry cache (<see cref="ThreadKeys.ViewArray"/> and
    /// <see cref="ThreadKeys.ViewHandle"/>) when it names this array, else <see cref="ThreadViewSlow"/>.</summary>
    /// <remarks>
    /// <para>Ownership: the cache is the thread's own (thread-statics: no other thread reads or writes them), and only
    /// <see cref="Remember"/>, on this thread, fills it: with this array's key and the handle of the entry of
    /// <see cref="_views"/> this thread owns (it holds this thread's key: the thread took it, or found it there). Array keys
    /// are never reused (a 64-bit counter), and 0 (an empty cache) and <see cref="RetiredKey"/> are no live array's, so a
    /// match means this thread filled the cache from this array, and no other array since (it would have replaced both
    /// fields). An entry changes owner only when a thread is given an exited thread's index (<see cref="ThreadIndex"/>), so
    /// the entry is still this live thread's: two live threads never share a view of this array. A thread given an exited
    /// thread's index starts with an empty cache (its thread-statics are new) and takes the entry in
    /// <see cref="TakeThreadView"/>, back at record 0. A disposed array and a new one at its address have different keys:
    /// the new one never finds the old one's view.</para>
    /// <para>Lifetime: the handle is weak and the cache holds numbers only, so no thread keeps an array, its views or its
    /// memory alive. The handle is freed only by <see cref="ThreadViewTable"/>'s finalizer, once the array is unreachable;
    /// <see cref="GC.KeepAlive"/> keeps this array reachable until the handle is read, so its table (and the handle) cannot
    /// be finalized under the read, and the target, referenced by the table's entry, is alive: the read gives the view
    /// (the miss branch only guards).</para>
    /// <para>Memory ordering: the cache's two fields are written and read by one thread, in program order. The handle it
    /// holds was read from the thread's entry under <see cref="_viewsLock"/>, or without it as <see cref="ThreadViewSlow"/>
    /// argues; the handle's slot is written by the runtime at the handle's allocation (under that lock, before the entry
    /// held the handle) and by the GC when it moves the view (threads suspended), so the load through it sees the
    /// view.</para>
    /// <para>Cost: one thread-static block (one helper call, shared with any other thread-static of
    /// <see cref="ThreadKeys"/> in the method), two loads from it, a compare with <see cref="_key"/>, the handle's
    /// dependent load and a null test, inlined with the move; the same on every thread, creator or not.</para>
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private NativeRecordView ThreadView() => ThreadView(ThreadKeys.ViewArray, ThreadKeys.ViewHandle);

    /// <summary><see cref="ThreadView()"/> with the cache read by the caller (<see cref="ThreadKeys.ViewArray"/>,
    /// <see cref="ThreadKeys.ViewHandle"/>, on this thread).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private NativeRecordView ThreadView(long cachedArray, nint cachedView)
    {
        if (cachedArray == _key && WeakGCHandle<NativeRecordView>.FromIntPtr(cachedView).TryGetTarget(out var view))
        {
            GC.KeepAlive(this); // the array, so its table's handles, reachable until the handle was read
            return view;
        }
        return ThreadViewSlow();
    }

    /// <summary>The cache named another array (or none): the thread's entry of <see cref="_views"/> at its
    /// <see cref="ThreadIndex"/>, when the entry holds this thread's key; else <see cref="TakeThreadView"/>. Either way the
    /// cache then names this array.</summary>
    /// <remarks>Memory ordering: the table and its entries are written under <see cref="_viewsLock"/>; a thread returns only
    /// an entry with its own key, which it wrote itself (program order), or which a thread growing the table copied into
    /// the new one before publishing it with a release (<see cref="Volatile.Write{T}(ref T, T)"/>, as the table itself
    /// is published); the read of the reference and the dependent read of the entry see it whole (reads through a reference
    /// are ordered after the read of the reference). A thread that reads an older table still finds its own entry there:
    /// old tables are never cleared.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private NativeRecordView ThreadViewSlow()
    {
        long key = ThreadKeys.Key;
        int index = ThreadKeys.Index;
        var entries = _views?.Entries;
        if (entries is not null && (uint)index < (uint)entries.Length)
        {
            ref var entry = ref entries[index];
            if (entry.Owner == key && key != 0) return Remember(entry);
        }
        return TakeThreadView();
    }

    /// <summary>Fills the calling thread's cache with its entry of this array (not for a resurrected array: its handles
    /// are freed).</summary>
    private NativeRecordView Remember(in ThreadViewEntry entry)
    {
        long key = _key;
        if (key != RetiredKey)
        {
            ThreadKeys.ViewHandle = entry.Handle;
            ThreadKeys.ViewArray = key;
        }
        return entry.View!;
    }

    /// <summary>The calling thread's first use of the array's view (or its first since it was given an exited thread's
    /// index): makes its entry, or takes over the exited thread's view, back at record 0 as a new view starts.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    private NativeRecordView TakeThreadView()
    {
        long key = HeapThreadCheck.CurrentKey;
        int index = ThreadIndex.Acquire();
        lock (_viewsLock)
        {
            // Under the lock InvalidateViews takes: a view made or taken while the array is disposed is never left pointing at it.
            if (_viewsInvalidated || !IsAllocated) ThrowHelper.ThrowDisposed($"RecordArray<{RecordTypes.TypeName(typeof(T))}>");
            var views = _views;
            if (views is null) Volatile.Write(ref _views, views = new ThreadViewTable(this)); // release, as the entries below
            var entries = views.Entries;
            if (index >= entries.Length)
            {
                var grown = new ThreadViewEntry[Math.Max(4, (int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)index + 1))];
                entries.CopyTo(grown, 0);
                Volatile.Write(ref views.Entries, grown); // release: the copied entries before the table (see ThreadViewSlow)
                entries = grown;
            }
            ref var entry = ref entries[index];
            if (entry.View is null)
            {
                var view = NewView();
                entry.Handle = WeakGCHandle<NativeRecordView>.ToIntPtr(new WeakGCHandle<NativeRecordView>(view));
                entry.View = view;
            }
            else
            {
                entry.View.Address = _base; // an exited thread's: this thread's view starts at record 0 like any other
            }
            entry.Owner = key;
            return Remember(entry);
        }
    }

    /// <summary>Entries of the other threads' views table (tests: it grows with the threads alive at once, not with every
    /// thread that ever used the array).</summary>
    internal int ThreadViewSlots => _views?.Entries.Length ?? 0;

    /// <summary>A new, independent moving view positioned at record 0 (one per thread when several threads scan).</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public RecordView<T> CreateView() => new(this, TrackedView());

    /// <summary>A new view at record 0, tracked weakly in a checked array so that Dispose nulls it.</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    private NativeRecordView TrackedView()
    {
        if (!IsAllocated) ThrowHelper.ThrowDisposed($"RecordArray<{RecordTypes.TypeName(typeof(T))}>");
        var view = NewView();
        if (_record.Mode != RecordMode.CheckedView) return view; // unchecked views are bare: nothing to null later
        lock (_viewsLock)
        {
            // Checked under the lock InvalidateViews takes: a view made while the array is disposed is never left pointing at it.
            if (_viewsInvalidated) ThrowHelper.ThrowDisposed($"RecordArray<{RecordTypes.TypeName(typeof(T))}>");
            var views = _otherViews ??= [];
            if (views.Count >= _pruneAt)
            {
                views.RemoveAll(static w => !w.TryGetTarget(out _));
                _pruneAt = Math.Max(16, 2 * views.Count);
            }
            views.Add(new WeakReference<NativeRecordView>(view));
        }
        return view;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)] // RecordView.MoveTo: the same inlined checks and store as MoveTo
    internal void Position(NativeRecordView view, int index)
    {
        if ((uint)index >= (uint)Length) ThrowHelper.ThrowIndexOutOfRange(index, Length);
        if (_chunk.DedicatedStamp != _generation) throw DisposedException(_chunk);
        view.Address = _base + index * _stride;
    }

    /// <summary>Enumerates the records as items, each bound to its record (what <c>foreach</c> over the array uses).</summary>
    /// <remarks>One new 40-byte item per record, so saving an item (in a list, a LINQ result) keeps that record. For a scan
    /// that allocates nothing use <c>foreach (var r in array.Scan())</c>.</remarks>
    public Enumerator GetEnumerator() => new(this);

    /// <inheritdoc cref="GetEnumerator"/>
    IEnumerator<T> IEnumerable<T>.GetEnumerator() => new Enumerator(this);

    /// <inheritdoc cref="GetEnumerator"/>
    IEnumerator IEnumerable.GetEnumerator() => new Enumerator(this);

    /// <summary>The allocation-free scan: <c>foreach (var r in array.Scan())</c> moves <see cref="View"/>, the calling
    /// thread's view of the array, over every record in order.</summary>
    /// <remarks>
    /// <para>The item of this loop is one moving view, not one object per record: after the loop moves on, a reference to it
    /// shows the next record, so do not save it, add it to a list or let a lambda keep it (<c>foreach</c> over the array
    /// itself gives items that stay). Moving <see cref="View"/> inside the loop (<see cref="MoveTo"/>) does not move the
    /// loop, but the view then shows the other record until the next step.</para>
    /// <para>The enumerator is a ref struct of four fields (the view, the next and end addresses, the stride): it cannot be
    /// boxed or captured, allocates nothing, and leaves the JIT few values to keep across the loop (docs/memory.md, bulk
    /// path). Each step compares the array's stamp, so a loop whose array (or allocator) is disposed, in its body or by
    /// another thread, stops at the next record with <see cref="ObjectDisposedException"/>. Threads scan at once without
    /// disturbing each other (each moves its own view), but two loops at once on one thread (nested) move one view: give the
    /// inner one its own with <see cref="CreateView"/> and <see cref="RecordView{T}.Scan"/>.</para>
    /// </remarks>
    /// <exception cref="ObjectDisposedException">The array was disposed before this thread's first use of its view.</exception>
    public ScanEnumerator Scan() => new(ThreadView(), _base, _base + Length * _stride, _stride);

    internal ScanEnumerator ScanWith(NativeRecordView view) => new(view, _base, _base + Length * _stride, _stride);

    /// <summary>Frees the records. In checked mode every item and view throws when used afterwards; in both modes the
    /// indexer, the enumerators and the moves throw <see cref="ObjectDisposedException"/>.</summary>
    /// <remarks>
    /// <para>Idempotent; does nothing after the allocator's Dispose. In checked mode items see the moved stamp and views their
    /// nulled address and throw <see cref="ObjectDisposedException"/> naming the array (or, when the allocator was disposed,
    /// the allocator). In unchecked mode items and views are bare: a use afterwards reads or writes the dead
    /// array.</para>
    /// <para>Safe against readers and writers on other threads (a loop, a move, an item's or a view's access racing
    /// Dispose): the block is not reused while they may still be in it. Its native memory goes back to the system only when
    /// the GC finds the array's chunk unreachable, and every item, view, enumerator and the array itself reference it: no
    /// reader or writer can reach memory handed to someone else, in either mode. A racing access may still read or write the
    /// dead array (best-effort check), never another one. The cost: the block outlives Dispose until a collection after its
    /// items and views are dropped (the GC is told its size, so it collects sooner), and each array is a system allocation of
    /// its own instead of a slab block.</para>
    /// </remarks>
    public void Dispose()
    {
        if (_slab.IsDisposed) return;
        if (NativeSlabAllocator.TryReleaseStamp(ref _chunk.DedicatedStamp, _generation))
        {
            // The stamp has moved: items, moves and enumerators see it. A checked view's next access sees its nulled address.
            InvalidateViews();
            _owner.Untrack(this);
            _slab.FreeDedicated(_chunk, deferred: true);
        }
    }

    /// <summary>An item for the record at <paramref name="address"/>, after the disposal check (both modes: an unchecked item
    /// would not notice later).</summary>
    private T ItemAt(byte* address)
    {
        if (_chunk.DedicatedStamp != _generation) throw DisposedException(_chunk);
        var item = (NativeRecordView)(_itemRecord ?? ResolveItemRecord()).Create(); // an item mode's class derives from NativeRecordView
        item.Address = address;
        item.Generation = _generation;
        item.Chunk = _chunk;
        item.IsViewHandle = true; // an array's: Delete refuses it
        item.IsItem = true;
        return Unsafe.As<T>(item);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private RecordType ResolveItemRecord()
        => _itemRecord = _record.Mode == RecordMode.CheckedView
            ? RecordTypeCache<T>.CheckedItem ?? TypeAllocator.Resolve<T>(RecordMode.CheckedItem)
            : _record;

    /// <summary>For a move on a disposed array: the allocator's disposal if that is why, else the array's.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ObjectDisposedException DisposedException(SlabChunk chunk)
    {
        string array = $"RecordArray<{RecordTypes.TypeName(typeof(T))}>";
        if (chunk.Owner is { IsDisposed: true } slab)
        {
            string what = $"TypeAllocator '{RecordChunks.OwnerNameOf(slab)}' (the allocator of the {array})";
            return new ObjectDisposedException(what, $"The {what} has been disposed; the array's memory was freed.");
        }
        return new ObjectDisposedException(array, $"The {array} has been disposed; its memory was freed.");
    }

    /// <summary>At Dispose (the array's or the allocator's): in checked mode nulls the address of every view of this
    /// array, which their accessors test. Unchecked views are bare and keep their address: a racing use reaches the dead
    /// array (its memory is kept while views exist), never a null page or another block. Items are not tracked: they compare
    /// the stamp, which Dispose has moved.</summary>
    void IRecordArray.InvalidateViews() => InvalidateViews();

    private void InvalidateViews()
    {
        if (_record.Mode != RecordMode.CheckedView) return;
        lock (_viewsLock)
        {
            _viewsInvalidated = true;
            foreach (var entry in _views?.Entries ?? [])
            {
                if (entry.View is { } threadView) threadView.Address = null;
            }
            if (_otherViews is null) return;
            foreach (var weak in _otherViews)
            {
                if (weak.TryGetTarget(out var view)) view.Address = null;
            }
            _otherViews = null;
        }
    }

    private NativeRecordView NewView()
    {
        var view = (NativeRecordView)_record.Create(); // a view mode's class derives from NativeRecordView
        view.Address = _base;
        view.Generation = _generation;
        view.Chunk = _chunk;
        view.IsViewHandle = true;
        return view;
    }

    /// <summary>A thread's view of the array, a weak handle to it (what the thread's cache holds) and the key of the thread
    /// that owns it (0: none yet).</summary>
    private struct ThreadViewEntry
    {
        internal NativeRecordView? View;
        internal nint Handle;
        internal long Owner;
    }

    /// <summary>Never an array's key in a thread's cache: what the views table's finalizer sets.</summary>
    private const long RetiredKey = -1;

    /// <summary>The threads' views of one array. Referenced only by the array: finalized once the array is unreachable (no
    /// thread can then be reading a handle through it, see <see cref="ThreadView()"/>), when it frees the handles.</summary>
    /// <remarks>It runs in the same finalization pass as the array block's release (a critical finalizer, which runs after
    /// it), so the block is not kept a collection longer. It retires the array's key first (a release), so an array
    /// resurrected by another finalizer never matches a cache and never reads a freed handle.</remarks>
    private sealed class ThreadViewTable(RecordArray<T> array)
    {
        internal ThreadViewEntry[] Entries = [];

        ~ThreadViewTable()
        {
            Volatile.Write(ref array._key, RetiredKey);
            foreach (var entry in Entries)
            {
                if (entry.Handle != 0) WeakGCHandle<NativeRecordView>.FromIntPtr(entry.Handle).Dispose();
            }
        }
    }

    /// <summary>Hands out an item per record, in order: what <c>foreach</c> over the array and LINQ use.</summary>
    /// <remarks>Each step makes a new item (40 bytes) bound to its record, after checking that the array is alive, so a loop
    /// whose array is disposed stops at the next record with <see cref="ObjectDisposedException"/>. <see cref="Current"/> is
    /// the same item until the next step. Not thread-safe (one enumerator per loop, as for any enumerator).</remarks>
    public struct Enumerator : IEnumerator<T>
    {
        private readonly RecordArray<T> _array;
        private int _index;
        private T? _current;

        internal Enumerator(RecordArray<T> array)
        {
            _array = array;
            _index = -1;
            _current = null;
        }

        /// <summary>Makes the item of the next record.</summary>
        /// <returns>False after the last record.</returns>
        /// <exception cref="ObjectDisposedException">The array or its allocator was disposed.</exception>
        public bool MoveNext()
        {
            var array = _array;
            int next = _index + 1;
            if (next >= array.Length)
            {
                _index = array.Length;
                _current = null;
                return false;
            }
            _current = array.ItemAt(array._base + next * array._stride);
            _index = next;
            return true;
        }

        /// <summary>The item of the current record (null before the first <see cref="MoveNext"/> and after the last).</summary>
        public readonly T Current => _current!;

        readonly object IEnumerator.Current => Current;

        /// <summary>Goes back to before the first record.</summary>
        public void Reset()
        {
            _index = -1;
            _current = null;
        }

        /// <summary>Does nothing: the enumerator holds nothing to release.</summary>
        public readonly void Dispose()
        {
        }
    }

    /// <summary>Moves one view over every record in order: <see cref="Scan"/>'s enumerator (and its own enumerable, so
    /// <c>foreach (var r in array.Scan())</c> works).</summary>
    /// <remarks>A ref struct: cannot be boxed or captured, so it allocates nothing. Four fields (the view, the next and end
    /// addresses, the stride), and the disposal check compares the array's stamp, reached through the view: fewer values
    /// for the JIT to keep across the loop (see docs/memory.md, bulk path). <see cref="Current"/> is the one moving view:
    /// do not save it.</remarks>
    public ref struct ScanEnumerator
    {
        private readonly NativeRecordView _view;
        private byte* _next;
        private readonly byte* _end;
        private readonly nint _stride;

        internal ScanEnumerator(NativeRecordView view, byte* start, byte* end, nint stride)
        {
            _view = view;
            _next = start;
            _end = end;
            _stride = stride;
        }

        /// <summary>Itself, so <c>foreach</c> takes the scan directly.</summary>
        public readonly ScanEnumerator GetEnumerator() => this;

        /// <summary>Moves the view to the next record.</summary>
        /// <exception cref="ObjectDisposedException">The array or its allocator was disposed during the loop.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool MoveNext()
        {
            byte* next = _next;
            if (next == _end) return false;
            var view = _view;
            // Once per record, not per access: a loop whose array is disposed (in its body or by another thread) stops at
            // the next record. The stamp is the array chunk's field; the view's chunk and generation share the line the
            // next store writes anyway.
            if (view.Chunk!.DedicatedStamp != view.Generation) throw DisposedException(view.Chunk);
            view.Address = next;
            _next = next + _stride;
            return true;
        }

        /// <summary>The one moving view, positioned at the current record: the same object at every step.</summary>
        public readonly T Current => Unsafe.As<T>(_view);
    }
}
