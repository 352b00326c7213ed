using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text.Json.Serialization;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// The base of every implementation <see cref="TypeAllocator"/> generates: a handle to one record in
/// native memory (a proxy from <see cref="TypeAllocator.New{T}"/>), or a <see cref="RecordArray{T}"/>'s item (bound to one of
/// its records) or moving view.
/// </summary>
/// <remarks>
/// <para>A record's property accessors are loads and stores at constant offsets from the record's
/// address. In checked mode each first compares the record's generation stamp with the handle's
/// (<c>if (*(uint*)(Address + stampOffset) != Generation) throw StaleException()</c>): the stamp is the
/// last four bytes of the record's block, a line the access touches anyway. Delete and the allocator's
/// Dispose move the stamp on, so a handle used after either throws, and so does any copy of it
/// (<c>MemberwiseClone</c>, a copy made by reflection): the check is in the memory, not in the handle.
/// A TypeAllocator never frees a record's memory (its chunks and large blocks are pooled, see
/// RecordChunks), so the stamp read never touches unmapped memory and the handle needs no reference. A
/// record array's view (<see cref="NativeRecordView"/>) tests its address for null instead (the array's
/// Dispose nulls it), and an array's item compares the array's stamp, a field of its chunk object; the
/// array's memory is freed only when its views and items are unreachable.</para>
/// <para>Weight: an object header and 16 bytes of value fields (address, generation, recycling index,
/// flags), 32 bytes on 64-bit, no reference, nothing per record beside it on the managed heap: less than a
/// plain class with 24 bytes of data (40), to the allocator and to a collection.</para>
/// <para>Validity is explicit: <see cref="IsAllocated"/>. A handle converts implicitly to no number,
/// pointer or bool ("shared_ptr and NULL"). Users cannot derive from this class. Serialized with
/// System.Text.Json (as its interface, as <c>object</c>, or returned from an endpoint), a record writes its interface's
/// properties and none of the members below (<see cref="CompilerServices.NativeRecordJsonConverter"/>; under source
/// generation add <see cref="NativeRecordJson.TypeInfoResolver"/> to the options' resolvers).</para>
/// <para>Thread safety: a handle may be read and written from several threads like any object with
/// plain fields (no atomicity beyond the natural alignment of each property); the checks are exact
/// when a Delete is ordered before a use by the program, best-effort against a racing Delete.</para>
/// </remarks>
[JsonConverter(typeof(CompilerServices.NativeRecordJsonConverter))]
public abstract unsafe class NativeRecord
{
    // Read by the generated accessors (the generated assembly ignores access checks to Manaloc). Four fields, 15 bytes and
    // no reference: the object is 32 bytes, less than a class of 24 bytes of data (40), and a collection marks it without
    // tracing anything (a reference field, even null, makes every collection trace each handle). Keep
    // it so (NativeRecordWeightTests). A record array's view carries its array's chunk (NativeRecordView).
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
    /// <summary><see cref="IsViewHandle"/>, <see cref="IsDeleted"/> and <see cref="IsLarge"/> in one byte: with it the fields
    /// take 15 bytes, so the object is 32 bytes, less than a plain class of the record's data.</summary>
    private byte _flags;

    private const byte ViewFlag = 1, DeletedFlag = 2, LargeFlag = 4, ItemFlag = 8;

    private bool HasFlag(byte flag) => (_flags & flag) != 0;

    private void SetFlag(byte flag, bool value) => _flags = (byte)(value ? _flags | flag : _flags & ~flag);

    /// <summary>Belongs to a record array (a view, or an item with <see cref="IsItem"/>), not a handle from New.</summary>
    internal bool IsViewHandle
    {
        get => HasFlag(ViewFlag);
        set => SetFlag(ViewFlag, value);
    }

    /// <summary>A record array's item: bound to one record for life (with <see cref="IsViewHandle"/>).</summary>
    internal bool IsItem
    {
        get => HasFlag(ItemFlag);
        set => SetFlag(ItemFlag, value);
    }

    /// <summary>Set by this handle's Delete: a second Delete is refused whatever the stamp holds by then.</summary>
    internal bool IsDeleted
    {
        get => HasFlag(DeletedFlag);
        set => SetFlag(DeletedFlag, value);
    }

    /// <summary>The record is larger than the largest slab class: a pooled block of its own (its stamp at the block's end),
    /// found through the slab's table of large blocks rather than a chunk header.</summary>
    internal bool IsLarge
    {
        get => HasFlag(LargeFlag);
        set => SetFlag(LargeFlag, value);
    }

    /// <summary>Where the record's stamp is, from <see cref="Address"/> (its block's last 4 bytes): from the chunk header's size
    /// class, or for a large record from its type. Not for views.</summary>
    internal int StampOffset => IsLarge ? RecordTypes.OfGenerated(GetType()).StampOffset : ClassStampOffset(Address);

    /// <summary>Where the stamp of the class block at <paramref name="address"/> is, from its chunk header's size class (which a
    /// TypeAllocator's chunk keeps for life).</summary>
    internal static int ClassStampOffset(byte* address)
        => SizeClasses.Sizes[((int*)SizeClasses.ChunkStart(address))[1]] - 4;

    internal NativeRecord()
    {
    }

    /// <summary>True while the record is allocated: not deleted (for a view: its array not disposed) and the allocator not disposed.</summary>
    [JsonIgnore]
    public bool IsAllocated => !IsDeleted && Address != null && *StampAddress == Generation;

    /// <summary>True when this is a moving view of a <see cref="RecordArray{T}"/> (<see cref="RecordArray{T}.View"/>,
    /// <see cref="RecordArray{T}.Scan"/>, <see cref="RecordArray{T}.CreateView"/>): it shows whichever record it was last moved
    /// to. False for an object from New and for an array's item (its indexer and <c>foreach</c>), which stays on its record.</summary>
    [JsonIgnore]
    public bool IsView => IsViewHandle && !IsItem;

    /// <summary>The interface this record implements.</summary>
    [JsonIgnore]
    public Type RecordInterface => RecordTypes.OfGenerated(GetType()).Interface;

    /// <summary>The record's native layout.</summary>
    [JsonIgnore]
    public TypeLayout Layout => RecordTypes.OfGenerated(GetType()).Layout;

    /// <summary>The stamp this handle compares: its block's trailer, or for a view its array's chunk field.</summary>
    internal uint* StampAddress => this is NativeRecordView { Chunk: { } chunk } ? (uint*)Unsafe.AsPointer(ref chunk.DedicatedStamp) : (uint*)(Address + StampOffset);

    /// <summary>Throws what an accessor of a checked handle would, when the record is no longer allocated (whatever the
    /// allocator's mode): for paths that are not hot, such as serialization, which must not read a dead record.</summary>
    /// <exception cref="InvalidOperationException">The record was deleted.</exception>
    /// <exception cref="ObjectDisposedException">The record's array or allocator was disposed.</exception>
    internal void ThrowIfNotAllocated()
    {
        if (!IsAllocated) throw StaleException();
    }

    /// <inheritdoc/>
    public override string ToString()
        => $"{RecordTypes.TypeName(RecordInterface)} record{(IsItem ? " item" : IsViewHandle ? " view" : "")} at 0x{(nuint)Address:x} ({(IsAllocated ? "allocated" : "not allocated")})";

    /// <summary>
    /// The exception for a use after Delete or Dispose. Generated accessors emit <c>throw StaleException()</c>:
    /// a block that ends in <c>throw</c> is cold to the JIT, so the check does not disturb register
    /// allocation on the hot path (a call to a throwing method looks like it may return, and did).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal Exception StaleException()
    {
        string name = RecordTypes.TypeName(RecordInterface);
        string? owner = null;
        if (this is NativeRecordView view)
        {
            // A record array's view or item: say which array, and whether its allocator went with it.
            string kind = IsItem ? "item" : "view";
            if (view.Chunk is { Owner: { IsDisposed: true } slab })
            {
                string what = $"TypeAllocator '{RecordChunks.OwnerNameOf(slab)}' (the allocator of the RecordArray<{name}>)";
                return new ObjectDisposedException(what, $"The {name} {kind} was used after its RecordArray<{name}>'s {what} was disposed; its records are gone.");
            }
            Diagnostics.ManalocEventSource.Log.UseAfterFree(name);
            // An ObjectDisposedException, as the array's own members throw after its Dispose (it is an InvalidOperationException too).
            return new ObjectDisposedException($"RecordArray<{name}>", $"The {name} {kind} was used after its RecordArray<{name}> was disposed; its records are gone.");
        }
        if (Address != null && RecordChunks.WasDisposed(Address, Generation, StampOffset, out owner))
        {
            string what = owner is null ? $"TypeAllocator (the {name} record's allocator)" : $"TypeAllocator '{owner}' (the {name} record's allocator)";
            return new ObjectDisposedException(what, $"The {what} has been disposed; its records are gone.");
        }
        Diagnostics.ManalocEventSource.Log.UseAfterFree(name);
        return new InvalidOperationException($"The {name} record was used after it was deleted.");
    }
}
