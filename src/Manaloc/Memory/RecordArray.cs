using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// N records of interface <typeparamref name="T"/> side by side in one native block, visited and
/// updated through one reusable generated view (a flyweight): no managed object per record.
/// </summary>
/// <typeparam name="T">The record interface.</typeparam>
/// <remarks>
/// <para>Why: each <see cref="TypeAllocator.New{T}"/> returns a managed handle the GC still sees;
/// for millions of records that is millions of objects to mark. Here the GC sees this object and
/// one view. <see cref="MoveTo"/> (or <c>foreach</c>, whose enumerator is a ref struct) points the
/// view at a record; reading and writing its properties goes straight to native memory, with the
/// same layout. Disposal is checked once per move rather than once per property access: <see cref="MoveTo"/>
/// and the enumerator compare the array's stamp. In checked mode <see cref="Dispose"/> (or the allocator's)
/// also nulls every view's address, which the view's accessors test (the address is loaded for the access
/// anyway): use after Dispose throws, at the cost of one test per access.</para>
/// <para>The view is one object: after <c>MoveTo(j)</c> a reference taken at <c>MoveTo(i)</c> sees
/// record j. Memory is zeroed at creation. Thread safety: the records may be read and written from
/// several threads (natural alignment, no atomicity beyond one property), but the view moves: give
/// each thread its own with <see cref="CreateView"/>. Dispose may race readers and writers on other
/// threads: they see the dead array or an exception, never memory handed to someone else (see
/// <see cref="Dispose"/>).</para>
/// </remarks>
public sealed unsafe class RecordArray<T> : IDisposable, IRecordArray where T : class
{
    private readonly NativeSlabAllocator _slab;
    private readonly byte* _base;
    private readonly nint _stride;
    private readonly SlabChunk _chunk;
    private readonly uint _generation;
    private readonly RecordType _record;
    private readonly NativeRecordView _view;
    private readonly T _viewAsT;
    private readonly TypeAllocator _owner;
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
        _view = NewView();
        _viewAsT = Unsafe.As<T>(_view);
    }

    /// <summary>Records in the array.</summary>
    public int Length { get; }

    /// <summary>Bytes from one record to the next: the layout's size (1 for a record with no fields).</summary>
    public int Stride => (int)_stride;

    /// <summary>True until <see cref="Dispose"/> (or the allocator's Dispose).</summary>
    public bool IsAllocated => _chunk.DedicatedStamp == _generation;

    /// <summary>The array's reusable view, positioned by <see cref="MoveTo"/> and the enumerator.</summary>
    /// <remarks>Before the first <see cref="MoveTo"/> it is at record 0. For an empty array (Length 0) that is a zeroed
    /// scratch record the array owns (its block always holds one record), so a stray access cannot reach another block.</remarks>
    public T View => _viewAsT;

    /// <summary>Points <see cref="View"/> at record <paramref name="index"/> and returns it.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is outside [0, Length).</exception>
    /// <exception cref="ObjectDisposedException">The array or its allocator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public T MoveTo(int index)
    {
        if ((uint)index >= (uint)Length) ThrowHelper.ThrowIndexOutOfRange(index, Length);
        if (_chunk.DedicatedStamp != _generation) throw DisposedException(_view); // do not point the view at a disposed array
        _view.Address = _base + index * _stride;
        return _viewAsT;
    }

    /// <summary>A new, independent view positioned at record 0 (one per thread when several threads scan).</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed.</exception>
    public RecordView<T> CreateView()
    {
        if (!IsAllocated) ThrowHelper.ThrowDisposed($"RecordArray<{RecordTypes.TypeName(typeof(T))}>");
        var view = NewView();
        if (_record.Mode != RecordMode.CheckedView) return new RecordView<T>(this, view); // unchecked views are bare: nothing to null later
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
        return new RecordView<T>(this, view);
    }

    internal void Position(NativeRecordView view, int index)
    {
        if ((uint)index >= (uint)Length) ThrowHelper.ThrowIndexOutOfRange(index, Length);
        if (_chunk.DedicatedStamp != _generation) throw DisposedException(view);
        view.Address = _base + index * _stride;
    }

    /// <summary>Enumerates the records through <see cref="View"/>; allocates nothing.</summary>
    public Enumerator GetEnumerator() => new(this);

    /// <summary>Frees the records; in checked mode the views throw <see cref="InvalidOperationException"/> when used afterwards.</summary>
    /// <remarks>
    /// <para>Idempotent; does nothing after the allocator's Dispose. In unchecked mode the views are bare (a use
    /// afterwards reads or writes the dead array; the array's own view is nulled, so a loop's next move throws), and
    /// moves throw.</para>
    /// <para>Safe against readers and writers on other threads (a loop, a move, a view's access racing Dispose): the
    /// block is not reused while they may still be in it. Its native memory goes back to the system only when the GC
    /// finds the array's chunk unreachable, and every view, enumerator and the array itself reference it: no reader or
    /// writer can reach memory handed to someone else, in either mode. A racing access may still read or write the dead
    /// array (best-effort check), never another one. The cost: the block outlives Dispose until a collection after its
    /// views are dropped (the GC is told its size, so it collects sooner), and each array is a system allocation of its
    /// own instead of a slab block.</para>
    /// </remarks>
    public void Dispose()
    {
        if (_slab.IsDisposed) return;
        if (NativeSlabAllocator.TryReleaseStamp(ref _chunk.DedicatedStamp, _generation))
        {
            // A checked view's next access throws, and in both modes the enumerator's next move sees the array's own view nulled.
            InvalidateViews();
            _owner.Untrack(this);
            _slab.FreeDedicated(_chunk, deferred: true);
        }
    }

    /// <summary>For a move on a disposed array: the allocator's disposal if that is why, else the array's.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static ObjectDisposedException DisposedException(NativeRecordView view)
    {
        string what = view.Chunk is { Owner.IsDisposed: true } ? "TypeAllocator" : $"RecordArray<{RecordTypes.TypeName(typeof(T))}>";
        return new ObjectDisposedException(what, $"The {what} has been disposed; its memory was freed.");
    }

    /// <summary>At Dispose (the array's or the allocator's): in checked mode nulls the address of every view of this
    /// array, which their accessors test. Unchecked views are bare and keep their address: a racing use reaches the dead
    /// array (its memory is kept while views exist), never a null page or another block.</summary>
    void IRecordArray.InvalidateViews() => InvalidateViews();

    private void InvalidateViews()
    {
        if (_record.Mode != RecordMode.CheckedView) return;
        _view.Address = null;
        lock (_viewsLock)
        {
            _viewsInvalidated = true;
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

    /// <summary>Moves the array's view over every record in order.</summary>
    /// <remarks>A ref struct: cannot be boxed or captured, so it allocates nothing. Four fields (the view, the next and end
    /// addresses, the stride), and the disposal check compares the array's stamp, reached through the view: fewer values
    /// for the JIT to keep across the loop (see docs/memory.md, bulk path).</remarks>
    public ref struct Enumerator
    {
        private readonly NativeRecordView _view;
        private byte* _next;
        private readonly byte* _end;
        private readonly nint _stride;

        internal Enumerator(RecordArray<T> array)
        {
            _view = array._view;
            _next = array._base;
            _end = array._base + array.Length * array._stride;
            _stride = array._stride;
        }

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
            if (view.Chunk!.DedicatedStamp != view.Generation) throw DisposedException(view);
            view.Address = next;
            _next = next + _stride;
            return true;
        }

        /// <summary>The view, positioned at the current record.</summary>
        public readonly T Current => Unsafe.As<T>(_view);
    }
}
