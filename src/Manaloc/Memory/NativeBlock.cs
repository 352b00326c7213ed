using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// A checked handle to a block from <see cref="NativeSlabAllocator.AllocateBlock"/>: the pointer, its
/// length and the generation the block had when it was handed out.
/// </summary>
/// <remarks>
/// <para>Why: a raw pointer cannot tell whether it still points at its block. Every access through
/// this handle compares the block's current generation stamp with the handle's (one load, one
/// compare), so a use after <see cref="NativeSlabAllocator.Free(NativeBlock)"/> — even after the slot
/// was reused — or after the allocator was disposed raises an exception instead of touching freed
/// memory.</para>
/// <para>Validity is stated explicitly by <see cref="IsAllocated"/>; the handle converts implicitly to
/// no number, pointer or bool ("shared_ptr and NULL"): <c>default</c> is simply not allocated.
/// Thread safety: a copyable value; the check is exact when frees are ordered before uses by the
/// program, best-effort against a racing free on another thread.</para>
/// </remarks>
public readonly unsafe struct NativeBlock : IEquatable<NativeBlock>
{
    internal readonly byte* Pointer;
    internal readonly SlabChunk? Chunk;
    internal readonly uint Generation;

    internal NativeBlock(byte* pointer, nuint length, SlabChunk chunk, uint generation)
    {
        Pointer = pointer;
        Length = length;
        Chunk = chunk;
        Generation = generation;
    }

    /// <summary>Bytes requested for the block.</summary>
    public nuint Length { get; }

    /// <summary>True while the block is allocated: not freed, allocator not disposed. False for <c>default</c>.</summary>
    public bool IsAllocated => Chunk is { } chunk && chunk.StampOf(Pointer) == Generation;

    /// <summary>The block's address, after checking that it is still allocated.</summary>
    /// <exception cref="InvalidOperationException">The block was freed (or is default).</exception>
    /// <exception cref="ObjectDisposedException">Its allocator was disposed.</exception>
    public void* GetPointer()
    {
        EnsureAllocated();
        return Pointer;
    }

    /// <summary>The block as bytes, after checking that it is still allocated.</summary>
    /// <remarks>The span is not re-checked: do not keep it past the block's free.</remarks>
    /// <exception cref="InvalidOperationException">The block was freed, is default, or is longer than a span can be.</exception>
    /// <exception cref="ObjectDisposedException">Its allocator was disposed.</exception>
    public Span<byte> AsSpan()
    {
        EnsureAllocated();
        if (Length > int.MaxValue) ThrowHelper.ThrowInvalidOperation("The block is longer than a Span<byte> can describe.");
        return new Span<byte>(Pointer, (int)Length);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EnsureAllocated()
    {
        if (Chunk is not { } chunk || chunk.StampOf(Pointer) != Generation) ThrowStale();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowStale()
    {
        if (Chunk is null) ThrowHelper.ThrowInvalidOperation("The block is default: it was never allocated.");
        if (Chunk.Owner.IsDisposed) Chunk.Owner.ThrowDisposed();
        Diagnostics.ManalocEventSource.Log.UseAfterFree("NativeBlock");
        ThrowHelper.ThrowInvalidOperation("The block was used after it was freed.");
    }

    /// <summary>Same block and same generation.</summary>
    public bool Equals(NativeBlock other) => Pointer == other.Pointer && Generation == other.Generation && ReferenceEquals(Chunk, other.Chunk);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is NativeBlock other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine((nuint)Pointer, Generation);

    /// <summary>Same block and same generation.</summary>
    public static bool operator ==(NativeBlock left, NativeBlock right) => left.Equals(right);

    /// <summary>Not the same block and generation.</summary>
    public static bool operator !=(NativeBlock left, NativeBlock right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString()
        => Chunk is null ? "NativeBlock (default)" : $"NativeBlock 0x{(nuint)Pointer:x}, {Plural.Of(Length, "byte")}, {(IsAllocated ? "allocated" : "freed")}";
}
