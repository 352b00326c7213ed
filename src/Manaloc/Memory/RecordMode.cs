namespace Manaloc.Memory;

/// <summary>Which accessors an implementation gets; each (interface, mode) is generated once per process.</summary>
internal enum RecordMode
{
    /// <summary>
    /// Handles from New in a checked allocator: an access tests only that the handle's address is not null
    /// (loaded for the access anyway). Delete nulls it, and the allocator's Dispose nulls every live handle's
    /// (its chunks track them), so a handle used after either throws. Delete itself checks the generation stamp.
    /// </summary>
    Checked,

    /// <summary>Unchecked allocators (handles and views): bare loads and stores.</summary>
    Unchecked,

    /// <summary>
    /// Views of a checked allocator's <see cref="RecordArray{T}"/>: an access tests only that the view's
    /// address is not null (the address is loaded for the access anyway). The array checks its stamp once
    /// per move instead of once per access, and nulls the address of all its views when it is disposed
    /// (or its allocator is), so a view used afterwards throws.
    /// </summary>
    CheckedView,
}
