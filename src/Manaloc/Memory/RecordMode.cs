namespace Manaloc.Memory;

/// <summary>Which accessors an implementation gets; each (interface, mode) is generated once per process.</summary>
internal enum RecordMode
{
    /// <summary>
    /// Handles from New in a checked allocator: an access compares the record's stamp (the last 4 bytes of its
    /// slab block, at a constant offset from the address; a dedicated block's chunk field) with the handle's
    /// generation. Delete and the allocator's Dispose move the stamp on, so the handle and every copy of it throw.
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
