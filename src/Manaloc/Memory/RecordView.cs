using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

/// <summary>An independent moving view over a <see cref="RecordArray{T}"/>, for a second cursor or another thread.</summary>
/// <typeparam name="T">The record interface.</typeparam>
/// <remarks>Same checks as the array's own view (<see cref="RecordArray{T}.View"/>). <see cref="Value"/> is one object that
/// shows whichever record the view was last moved to: do not save it (the array's indexer gives an object that stays on its
/// record). Thread safety: one view per thread; the view moves.</remarks>
public sealed class RecordView<T> where T : class
{
    private readonly RecordArray<T> _array;
    private readonly NativeRecordView _view;

    internal RecordView(RecordArray<T> array, NativeRecordView view)
    {
        _array = array;
        _view = view;
        Value = System.Runtime.CompilerServices.Unsafe.As<T>(view);
    }

    /// <summary>The view as the record interface: the same object whatever record the view is at.</summary>
    public T Value { get; }

    /// <summary>True while the array is allocated.</summary>
    public bool IsAllocated => _view.IsAllocated;

    /// <summary>Points the view at record <paramref name="index"/> and returns it.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is outside the array.</exception>
    /// <exception cref="ObjectDisposedException">The array or its allocator was disposed.</exception>
    public T MoveTo(int index)
    {
        _array.Position(_view, index);
        return Value;
    }

    /// <summary>The allocation-free scan with this view: <c>foreach (var r in view.Scan())</c> moves <see cref="Value"/> over
    /// every record of the array in order (as <see cref="RecordArray{T}.Scan"/> does with the array's own view).</summary>
    /// <remarks>The loop's item is this one moving view: do not save it. Each step compares the array's stamp, so a loop
    /// whose array is disposed stops at the next record with <see cref="ObjectDisposedException"/>.</remarks>
    public RecordArray<T>.ScanEnumerator Scan() => _array.ScanWith(_view);
}
