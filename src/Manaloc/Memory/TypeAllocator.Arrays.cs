using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

public sealed unsafe partial class TypeAllocator
{
    /// <summary>Allocates <paramref name="count"/> zeroed records of <typeparamref name="T"/> in one block: a list of items that stay on
    /// their records (indexer, <c>foreach</c>, LINQ), with an allocation-free scan through one moving view (<c>Scan()</c>).</summary>
    /// <remarks>Thread-safe. The array is freed by its Dispose (or this allocator's). See <see cref="RecordArray{T}"/>.
    /// The block always holds at least one record (an empty array too), because the view starts at record 0.</remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is negative or the block would exceed the address space.</exception>
    /// <exception cref="ArgumentException">T cannot be a record.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    /// <exception cref="NotSupportedException">Under NativeAOT (no dynamic code): T is not marked <see cref="NativeRecordAttribute"/>.</exception>
    /// <remarks>Annotated like <see cref="New{T}"/>, and intercepted like it for a <see cref="NativeRecordAttribute"/> interface.</remarks>
    [RequiresDynamicCode(RecordTypes.EmitsCodeMessage)]
    [RequiresUnreferencedCode(RecordTypes.ReadsInterfaceMessage)]
    public RecordArray<T> NewArray<T>(int count) where T : class => NewRecordArray<T>(count, null);

    /// <summary>The body of <see cref="NewArray{T}"/> (see <see cref="NewRecord{T}"/> for <paramref name="registration"/>).</summary>
    internal RecordArray<T> NewRecordArray<T>(int count, CompiledRecordType? registration) where T : class
    {
        if (count < 0) ThrowHelper.ThrowArgumentOutOfRange(nameof(count), count, "The count must not be negative.");
        if (_disposed) ThrowDisposed();
        var record = (_checked ? RecordTypeCache<T>.CheckedView : RecordTypeCache<T>.UncheckedView) ?? Resolve<T>(ViewMode, registration);
        ulong bytes = (ulong)count * (ulong)Math.Max(record.Layout.Size, 1); // the array's stride (1 for a record with no fields)
        if (bytes > (ulong)nint.MaxValue / 2) ThrowHelper.ThrowArgumentOutOfRange(nameof(count), count, "The array would not fit in the address space.");
        // At least one record: the view starts at record 0 (View, CreateView) and is usable before MoveTo, so even an
        // empty array's block must hold the whole layout or a write through it lands in the next block.
        nuint size = (nuint)Math.Max(bytes, (ulong)record.BlockSize);
        // A block of its own, whatever the size: its memory goes back only when the array's views are unreachable, so a
        // reader racing Dispose never reaches memory handed to someone else (see RecordArray.Dispose).
        byte* p = _slab.AllocateStamped(-1, size, record.Alignment, out SlabChunk chunk, out uint generation);
        chunk.IsRecordArray = true;
        NativeMemory.Clear(p, size);
        chunk.DedicatedTag = record.ArrayTag;
        var array = new RecordArray<T>(this, _slab, record, p, count, chunk, generation);
        lock (_arrays)
        {
            _arrays.Add(array);
        }
        return array;
    }

    // Live record arrays (both modes), so Dispose can null their checked views' addresses: checked views test only that on
    // each access (items and the enumerators compare the array's stamp, which the slab's Dispose moves on). An array never disposed stays here
    // until Dispose, as its native block does (and the leak report shows it).
    private readonly HashSet<IRecordArray> _arrays = new(ReferenceEqualityComparer.Instance);

    internal void Untrack(IRecordArray array)
    {
        lock (_arrays)
        {
            _arrays.Remove(array);
        }
    }

    private void InvalidateAllViews()
    {
        lock (_arrays)
        {
            foreach (var array in _arrays) array.InvalidateViews();
            _arrays.Clear();
        }
    }
}
