using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// The base of every implementation <see cref="TypeAllocator"/> generates: a handle to one record in
/// native memory (a proxy from <see cref="TypeAllocator.New{T}"/>) or a movable view over the records
/// of a <see cref="RecordArray{T}"/>.
/// </summary>
/// <remarks>
/// <para>A record's property accessors are loads and stores at constant offsets from the record's
/// address. In checked mode each first compares the slot's generation stamp with the handle's
/// generation (one load, one compare, a call that never returns on mismatch), so a handle used after
/// <see cref="TypeAllocator.Delete{T}(T)"/> — even after the slot holds a new object — or after the
/// allocator was disposed throws instead of reading freed or reused memory.</para>
/// <para>Validity is explicit: <see cref="IsAllocated"/>. A handle converts implicitly to no number,
/// pointer or bool (seed 004, "shared_ptr and NULL"). Users cannot derive from this class.</para>
/// <para>Thread safety: a handle may be read and written from several threads like any object with
/// plain fields (no atomicity beyond the natural alignment of each property); the checks are exact
/// when a Delete is ordered before a use by the program, best-effort against a racing Delete.</para>
/// </remarks>
public abstract unsafe class NativeRecord
{
    // Read by the generated accessors (the generated assembly ignores access checks to Manaloc).
    internal byte* Address;
    internal uint* Stamp;
    internal uint Generation;
    /// <summary>With recycling: the generated type's index (<see cref="RecordType.Index"/>), so Delete finds the stack to keep the handle in. Fits the object's padding.</summary>
    internal ushort RecycleIndex;
    internal bool IsViewHandle;
    internal SlabChunk? Chunk;

    internal NativeRecord()
    {
    }

    /// <summary>True while the record is allocated: not deleted (for a view: its array not disposed) and the allocator not disposed.</summary>
    public bool IsAllocated => Stamp != null && *Stamp == Generation;

    /// <summary>True when this is the reusable view of a <see cref="RecordArray{T}"/> rather than an object from New.</summary>
    public bool IsView => IsViewHandle;

    /// <summary>The interface this record implements.</summary>
    public Type RecordInterface => RecordTypes.OfGenerated(GetType()).Interface;

    /// <summary>The record's native layout.</summary>
    public TypeLayout Layout => RecordTypes.OfGenerated(GetType()).Layout;

    /// <inheritdoc/>
    public override string ToString()
        => $"{RecordInterface.Name} record{(IsViewHandle ? " view" : "")} at 0x{(nuint)Address:x} ({(IsAllocated ? "allocated" : "not allocated")})";

    /// <summary>Called by generated accessors when the stamp does not match.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    [DoesNotReturn]
    internal void ThrowStale()
    {
        string name = RecordInterface.Name;
        if (Chunk is not null && Chunk.Owner.IsDisposed)
        {
            MemoryThrowHelper.ThrowDisposed($"TypeAllocator (the {name} record's allocator)");
        }
        Diagnostics.ManalocEventSource.Log.UseAfterFree(name);
        ThrowHelper.ThrowInvalidOperation(IsViewHandle
            ? $"The {name} view was used after its RecordArray was disposed."
            : $"The {name} record was used after it was deleted.");
    }
}
