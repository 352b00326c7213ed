using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text.Json.Serialization;

namespace Manaloc.Memory;

/// <summary>
/// The base of every implementation <see cref="TypeAllocator"/> generates: a handle to one record in
/// native memory (a proxy from <see cref="TypeAllocator.New{T}"/>) or a movable view over the records
/// of a <see cref="RecordArray{T}"/>.
/// </summary>
/// <remarks>
/// <para>A record's property accessors are loads and stores at constant offsets from the record's
/// address. In checked mode each first compares the record's generation stamp with the handle's
/// (<c>if (*(uint*)(Address + stampOffset) != Generation) throw StaleException()</c>): the stamp is the
/// last four bytes of the record's slab block, a line the access touches anyway, or, for a record larger
/// than a class block, a field of its chunk. Delete and the allocator's Dispose move the stamp on, so a
/// handle used after either throws, and so does any copy of it (<c>MemberwiseClone</c>, a copy made by
/// reflection): the check is in the memory, not in the handle. A handle keeps its chunk reachable and a
/// released chunk's memory is freed only when the GC collects it, so the stamp read never touches
/// unmapped memory. A record array's view tests its address for null instead (the array's Dispose
/// nulls it; its memory is freed only when its views are unreachable).</para>
/// <para>Weight: an object header and 24 bytes of fields (chunk, address, generation, recycling index,
/// flags), 40 bytes on 64-bit, nothing per record beside it on the managed heap, and no reference to trace
/// for a record in a class block: as much as a plain class with 24 bytes of data.</para>
/// <para>Validity is explicit: <see cref="IsAllocated"/>. A handle converts implicitly to no number,
/// pointer or bool ("shared_ptr and NULL"). Users cannot derive from this class. Serialized as
/// <c>object</c> with System.Text.Json, a handle writes its record's properties (the generated class
/// implements them publicly) and none of the members below.</para>
/// <para>Thread safety: a handle may be read and written from several threads like any object with
/// plain fields (no atomicity beyond the natural alignment of each property); the checks are exact
/// when a Delete is ordered before a use by the program, best-effort against a racing Delete.</para>
/// </remarks>
public abstract unsafe class NativeRecord
{
    // Read by the generated accessors (the generated assembly ignores access checks to Manaloc). Six fields, 24 bytes:
    // the object is 40 bytes, as a class of 24 bytes of data. Keep it so (NativeRecordWeightTests).
    /// <summary>
    /// Null for a record in a class block: its stamp is in the block's trailer, whose memory a TypeAllocator never frees,
    /// so the handle needs no reference, and a set of handles costs a full collection what a set of plain objects does
    /// (nothing to trace beyond the object). The chunk of a record larger than the largest class (its stamp is the chunk's
    /// field, its memory freed at Delete) or of a record array's view.
    /// </summary>
    internal SlabChunk? Chunk;
    internal byte* Address;
    /// <summary>
    /// The stamp the record had when New handed it out (odd). Delete leaves it as it was and sets <see cref="IsDeleted"/>:
    /// a deleted handle's accessors then compare an odd generation with the block's stamp, which a free block never
    /// holds (free stamps are even), so even after the 32-bit stamp wraps a stale handle cannot pass its check on a free
    /// block (at worst, like any stale copy, it aliases the live record that got the same generation 2^31 uses later).
    /// </summary>
    internal uint Generation;
    /// <summary>With recycling: the generated type's index (<see cref="RecordType.Index"/>), so Delete finds the stack to keep the handle in.</summary>
    internal ushort RecycleIndex;
    internal bool IsViewHandle;
    /// <summary>Set by this handle's Delete: a second Delete is refused whatever the stamp holds by then.</summary>
    internal bool IsDeleted;

    internal NativeRecord()
    {
    }

    /// <summary>True while the record is allocated: not deleted (for a view: its array not disposed) and the allocator not disposed.</summary>
    [JsonIgnore]
    public bool IsAllocated => !IsDeleted && Address != null && *StampAddress == Generation;

    /// <summary>True when this is the reusable view of a <see cref="RecordArray{T}"/> rather than an object from New.</summary>
    [JsonIgnore]
    public bool IsView => IsViewHandle;

    /// <summary>The interface this record implements.</summary>
    [JsonIgnore]
    public Type RecordInterface => RecordTypes.OfGenerated(GetType()).Interface;

    /// <summary>The record's native layout.</summary>
    [JsonIgnore]
    public TypeLayout Layout => RecordTypes.OfGenerated(GetType()).Layout;

    /// <summary>The stamp this handle compares: its chunk's for a dedicated block or a view, else its class block's trailer.</summary>
    internal uint* StampAddress => Chunk is { } chunk ? (uint*)Unsafe.AsPointer(ref chunk.StampOf(Address)) : (uint*)(Address + ClassStampOffset(Address));

    /// <summary>Where the stamp of the class block at <paramref name="address"/> is, from its chunk header's size class (which a TypeAllocator's chunk keeps for life).</summary>
    internal static int ClassStampOffset(byte* address)
        => SizeClasses.Sizes[((int*)((nuint)address & ~(nuint)(SizeClasses.ChunkSize - 1)))[1]] - 4;

    /// <inheritdoc/>
    public override string ToString()
        => $"{RecordTypes.TypeName(RecordInterface)} record{(IsViewHandle ? " view" : "")} at 0x{(nuint)Address:x} ({(IsAllocated ? "allocated" : "not allocated")})";

    /// <summary>
    /// The exception for a use after Delete or Dispose. Generated accessors emit <c>throw StaleException()</c>:
    /// a block that ends in <c>throw</c> is cold to the JIT, so the check does not disturb register
    /// allocation on the hot path (a call to a throwing method looks like it may return, and did).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal Exception StaleException()
    {
        string name = RecordTypes.TypeName(RecordInterface);
        if (Chunk is null && Address != null && !IsViewHandle && RecordChunks.WasDisposed(Address, Generation, ClassStampOffset(Address), out _)
            || Chunk is not null && Chunk.Owner.IsDisposed)
        {
            string what = $"TypeAllocator (the {name} record's allocator)";
            return new ObjectDisposedException(what, $"The {what} has been disposed; its memory was freed.");
        }
        Diagnostics.ManalocEventSource.Log.UseAfterFree(name);
        return new InvalidOperationException(IsViewHandle
            ? $"The {name} view was used after its RecordArray was disposed."
            : $"The {name} record was used after it was deleted.");
    }
}
