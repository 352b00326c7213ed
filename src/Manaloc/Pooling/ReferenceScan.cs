using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Manaloc.Pooling;

/// <summary>
/// The double-return scan: is an object among a run of references, compared as addresses with vector
/// instructions (4 or 8 references per compare instead of one).
/// </summary>
/// <remarks>
/// Comparing addresses is exact only while the object cannot move: a GC during the scan could move it
/// (a miss) and compact another object onto its old address (a false "returned twice"). So the object is
/// pinned for the scan (a pinned local: free unless a GC happens meanwhile). Pinned, it keeps its address,
/// and no other object can be at that address, before or after any relocation, so an element equals it
/// exactly when it is the object. The elements themselves may be relocated mid-scan: each is read once,
/// as an old or a new address, and either way equals the pinned object's only if it is that object.
/// </remarks>
internal static class ReferenceScan
{
    /// <summary>True when <paramref name="item"/> is one of <paramref name="references"/> (the slots of a stack, read as addresses).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)] // the deep part of a return's check: out of the inlined fast path
    public static unsafe bool Contains(ReadOnlySpan<nint> references, object item)
    {
        fixed (byte* pinned = &Unsafe.As<RawData>(item).Data)
        {
            // The address a reference holds is that of the object's method-table word, one pointer before its first
            // field; taken from the pinned pointer, it is the address the object keeps for the whole scan.
            return references.Contains((nint)pinned - sizeof(nint));
        }
    }

    /// <summary>The slots <c>[from, from + length)</c> of an array of one-reference elements, as addresses.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<nint> AsAddresses<TSlot>(TSlot[] slots, int from, int length)
    {
        // One range check for the whole run, then the elements reinterpreted (each is exactly one reference).
        var run = new ReadOnlySpan<TSlot>(slots, from, length);
        return MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<TSlot, nint>(ref MemoryMarshal.GetReference(run)), length);
    }

    /// <summary>The layout of any object's first field: where <c>fixed</c> takes its pin.</summary>
    private sealed class RawData
    {
        public byte Data;
    }
}
