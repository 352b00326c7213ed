namespace Manaloc.Memory;

/// <summary>An interface's generated implementation for one <see cref="RecordMode"/>, with what New needs precomputed.</summary>
/// <remarks>Immutable after construction; shared by every allocator in the process.</remarks>
internal sealed unsafe class RecordType
{
    public RecordType(Type @interface, TypeLayout layout, Type generated, RecordMode mode, delegate*<NativeRecord> create, ushort tag, ushort arrayTag, int index)
    {
        Index = index;
        Interface = @interface;
        InterfaceHandle = @interface.TypeHandle.Value;
        Layout = layout;
        Generated = generated;
        Mode = mode;
        Create = create;
        Tag = tag;
        ArrayTag = arrayTag;
        // The layout guarantees every field inside the record; a violation here would make accessors write past the block.
        foreach (var field in layout.Fields)
        {
            if ((long)field.Offset + field.Size > layout.Size)
            {
                throw new InvalidOperationException($"Layout of '{@interface.FullName}' is inconsistent: field '{field.Name}' ends at {(long)field.Offset + field.Size}, past the record size {layout.Size}.");
            }
        }
        BlockSize = BlockSizeOf(layout);
        Alignment = AlignmentOf(layout);
        ClassIndex = NativeSlabAllocator.StampedClass(BlockSize, Alignment);
        ClearBytes = ClassIndex >= 0 ? (int)((BlockSize + 7) & ~(nuint)7) : int.MaxValue;
        LargeLength = ClassIndex >= 0 ? 0 : LargeLengthOf(BlockSize);
        StampOffset = StampOffsetOf(BlockSize, Alignment);
        TagAndClass = tag | (uint)(ushort)ClassIndex << 16;
    }

    /// <summary>
    /// The stamp's offset from a record's address: the block's last 4 bytes (the tag is 4 bytes before it). A class block's,
    /// or, for a record larger than the largest class, its own block's of <see cref="LargeLength"/> bytes.
    /// </summary>
    public int StampOffset { get; }

    /// <summary>What New writes in a class block's trailer before the stamp: the tag (low half) and the size class (high half).</summary>
    public uint TagAndClass { get; }

    /// <summary>Bytes of the block of a record larger than the largest class (the record and its trailer, rounded up to 64); 0 for a class record.</summary>
    public nuint LargeLength { get; }

    /// <summary>Bytes of a record's block before its trailer: only an empty record (no fields, size 0) is rounded up, so it still gets a block of its own.</summary>
    public static nuint BlockSizeOf(TypeLayout layout) => (nuint)Math.Max(layout.Size, 1);

    /// <summary>A record's block alignment: at least 16.</summary>
    public static nuint AlignmentOf(TypeLayout layout) => (nuint)Math.Max(layout.Alignment, 16);

    /// <summary>Where a checked accessor finds the record's stamp, from its address: the last 4 bytes of its class block, or
    /// of its own block (<see cref="LargeLengthOf"/>) for a record larger than the largest class.</summary>
    public static int StampOffsetOf(TypeLayout layout) => StampOffsetOf(BlockSizeOf(layout), AlignmentOf(layout));

    /// <summary><see cref="StampOffsetOf(TypeLayout)"/> from a record's block size and alignment.</summary>
    public static int StampOffsetOf(nuint blockSize, nuint alignment)
    {
        int cls = NativeSlabAllocator.StampedClass(blockSize, alignment);
        return cls >= 0 ? SizeClasses.Sizes[cls] - 4 : checked((int)LargeLengthOf(blockSize) - 4);
    }

    /// <summary>Bytes of the block of a record larger than the largest class: the record and its trailer, rounded up to 64.</summary>
    public static nuint LargeLengthOf(nuint blockSize) => (blockSize + RecordChunks.LargeTrailer + 63) & ~(nuint)63;

    /// <summary>Bytes New clears: the record rounded up to 8, which stays clear of the block's 8-byte trailer (class sizes are multiples of 16), or int.MaxValue for large records.</summary>
    public int ClearBytes { get; }

    public Type Interface { get; }
    /// <summary>The interface's type handle, compared by New's one-entry cache.</summary>
    public nint InterfaceHandle { get; }
    public TypeLayout Layout { get; }
    public Type Generated { get; }
    public RecordMode Mode { get; }
    /// <summary>The generated type's static factory: a direct call, cheaper than a delegate to a static method.</summary>
    public delegate*<NativeRecord> Create { get; }
    /// <summary>Slab size class of one record, or -1 when a record is larger than the largest class.</summary>
    public int ClassIndex { get; }
    public nuint BlockSize { get; }
    public nuint Alignment { get; }
    /// <summary>Tag of single records in the slab's side table (leak reports by type).</summary>
    public ushort Tag { get; }
    /// <summary>Unique, dense number of this generated type in the process: the slot of its recycled handles in a thread's cache.</summary>
    public int Index { get; }

    /// <summary>Tag of record arrays of this type.</summary>
    public ushort ArrayTag { get; }
}
