namespace Manaloc.Memory;

/// <summary>Which accessors an implementation gets; each (interface, mode) is generated once per process.</summary>
internal enum RecordMode
{
    /// <summary>
    /// Handles from New in a checked allocator: an access compares the record's stamp (the last 4 bytes of its
    /// block, at a constant offset from the address) with the handle's generation. Delete and the allocator's Dispose move the stamp on, so the handle and every copy of it throw.
    /// </summary>
    Checked,

    /// <summary>Handles from New in an unchecked allocator: bare loads and stores.</summary>
    Unchecked,

    /// <summary>
    /// Views of a checked allocator's <see cref="RecordArray{T}"/>: an access tests only that the view's
    /// address is not null (the address is loaded for the access anyway). The array checks its stamp once
    /// per move instead of once per access, and nulls the address of all its views when it is disposed
    /// (or its allocator is), so a view used afterwards throws.
    /// </summary>
    CheckedView,
    /// <summary>Views of an unchecked allocator's <see cref="RecordArray{T}"/>: bare loads and stores (a view's class keeps its array's chunk).</summary>
    UncheckedView,
}
