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

    /// <summary>Views of an unchecked allocator's <see cref="RecordArray{T}"/>: bare loads and stores (a view's class keeps its array's chunk).
    /// An unchecked allocator's array items are instances of this class too, bound to one record for life.</summary>
    UncheckedView,

    /// <summary>
    /// Items of a checked allocator's <see cref="RecordArray{T}"/> (its indexer and default enumerator): each is bound to one
    /// record for life, and an access compares the array chunk's stamp with the item's generation (two dependent loads: the
    /// chunk reference, then its stamp field). The array's Dispose and the allocator's move the stamp on, so an item used
    /// afterwards throws, exactly, with nothing tracked: items may be made by the million and dropped.
    /// </summary>
    CheckedItem,
}
