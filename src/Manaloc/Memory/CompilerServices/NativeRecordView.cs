using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory.CompilerServices;

/// <summary>
/// The base of a <see cref="RecordArray{T}"/>'s views and items: a <see cref="NativeRecord"/> that also keeps its array's
/// chunk, whose stamp says whether the array is alive and whose memory is freed only when no view or item references it, so a
/// reader racing the array's Dispose never reaches memory handed to someone else. For generated code.
/// </summary>
/// <remarks>Equality: an item (the indexer's, the default enumerator's) equals every other item of the same record of the
/// same array, because the array hands out a new object each time (<c>array.Contains(array[3])</c>, <c>Distinct</c>, a
/// <c>HashSet</c> see one record once). A moving view equals only itself: what it shows changes when it moves.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract unsafe class NativeRecordView : NativeRecord
{
    internal SlabChunk? Chunk;

    internal NativeRecordView()
    {
    }

    /// <summary>For an item: true when <paramref name="obj"/> is an item of the same record of the same array. For a view:
    /// reference equality.</summary>
    public sealed override bool Equals(object? obj)
        => ReferenceEquals(this, obj)
            || IsItem && obj is NativeRecordView { IsItem: true } other && other.Address == Address && other.Chunk == Chunk && other.Generation == Generation;

    /// <summary>For an item: from its record's address, so equal items hash alike. For a view: the object's identity.</summary>
    public sealed override int GetHashCode() => IsItem ? ((nuint)Address).GetHashCode() : RuntimeHelpers.GetHashCode(this);
}
