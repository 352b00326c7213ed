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
/// address. In checked mode each first tests the address for null (it is loaded for the access anyway;
/// on null <c>throw StaleException()</c>): <see cref="TypeAllocator.Delete{T}(T)"/> nulls the address of
/// the handle it deletes, and the allocator's Dispose that of every live handle (a checked allocator's
/// chunks track them), so a handle used after Delete — even after the slot holds a new object, which
/// gets a handle of its own — or after Dispose throws instead of reading freed or reused memory. Delete
/// and <see cref="IsAllocated"/> compare the slot's generation stamp, which also stops a second Delete.</para>
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

    /// <summary>
    /// The exception for a use after Delete or Dispose. Generated accessors emit <c>throw StaleException()</c>:
    /// a block that ends in <c>throw</c> is cold to the JIT, so the check does not disturb register
    /// allocation on the hot path (a call to a throwing method looks like it may return, and did).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal Exception StaleException()
    {
        string name = RecordInterface.Name;
        if (Chunk is not null && Chunk.Owner.IsDisposed)
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
