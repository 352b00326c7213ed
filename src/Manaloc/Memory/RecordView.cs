namespace Manaloc.Memory;

/// <summary>An independent view over a <see cref="RecordArray{T}"/>, for a second cursor or another thread.</summary>
/// <typeparam name="T">The record interface.</typeparam>
/// <remarks>Same checks as the array's own view. Thread safety: one view per thread; the view moves.</remarks>
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

    /// <summary>The view as the record interface.</summary>
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
}
