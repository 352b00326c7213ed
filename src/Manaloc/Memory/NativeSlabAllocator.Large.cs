using System.Runtime.InteropServices;

namespace Manaloc.Memory;

public sealed unsafe partial class NativeSlabAllocator
{
    // Dedicated blocks: one system allocation each, with a SlabChunk of capacity 1 as its managed side.
    // Raw ones (Allocate above the largest class, or aligned beyond 64) are aligned to the chunk size, which is how
    // Free(void*) tells them from class blocks (those never start on a chunk boundary: the chunk header is there).
    // Stamped ones (large records, record arrays, large checked blocks) are freed through their chunk, so they need no
    // such alignment: a plain aligned allocation, no wasted pages. Guarded by _largeLock.
    private readonly object _largeLock = new();
    private readonly Dictionary<nint, SlabChunk> _large = [];
    private long _largeBytes;
    private long _largeAllocations;
    private long _largeFrees;

    /// <summary>The chunk of a live dedicated block that starts at <paramref name="p"/>, or null (freed, or not a dedicated block of ours).</summary>
    internal SlabChunk? DedicatedChunkOf(byte* p)
    {
        lock (_largeLock) return _large.GetValueOrDefault((nint)p);
    }

    /// <summary>A raw large block (unchecked path), aligned to the chunk size.</summary>
    private byte* AllocateLarge(nuint size, nuint alignment, out SlabChunk chunk)
        => AllocateDedicated(size, Math.Max(alignment, SizeClasses.ChunkSize), out chunk);

    /// <summary>A block of its own from the system, registered for statistics, leak reports and Dispose.</summary>
    internal byte* AllocateDedicated(nuint size, nuint alignment, out SlabChunk chunk)
    {
        if (_disposed) ThrowDisposed();
        nuint length = size == 0 ? 1 : size;
        byte* memory = (byte*)NativeMemory.AlignedAlloc(length, Math.Max(alignment, 16));
        if (memory == null) ThrowHelper.ThrowOutOfMemory(length);
        chunk = new SlabChunk(this, -1, memory, -1, length);
        if (!TryTrackLarge(chunk))
        {
            NativeMemory.AlignedFree(memory);
            ThrowDisposed();
        }
        return memory;
    }

    /// <summary>Adds a dedicated block to the large set and counts it; false (nothing added) once the allocator is disposed, and the caller gives the block back.</summary>
    private bool TryTrackLarge(SlabChunk chunk)
    {
        lock (_largeLock)
        {
            if (_disposed) return false;
            _large.Add((nint)chunk.Memory, chunk);
            _largeBytes += (long)chunk.Length;
            _largeAllocations++;
            return true;
        }
    }

    /// <summary>
    /// Frees a dedicated block. <paramref name="deferred"/>: its memory goes when the chunk object is collected
    /// (record arrays: views and enumerators that may still be reading it reference the chunk), else at once
    /// (its handles check the chunk's managed stamp, never the native memory).
    /// </summary>
    internal void FreeDedicated(SlabChunk chunk, bool deferred)
    {
        lock (_largeLock)
        {
            if (_disposed) ThrowDisposed();
            if (!_large.Remove((nint)chunk.Memory)) ThrowHelper.ThrowInvalidOperation("The large block was already freed.");
            chunk.Released = true;
            _largeBytes -= (long)chunk.Length;
            _largeFrees++;
        }
        if (chunk.Home is { } home) RecordChunks.ReturnLarge(home); // a struct handle's block: never freed (its stamp is in it)
        else if (deferred) chunk.DeferRelease(chunk.Length);
        else NativeMemory.AlignedFree(chunk.Memory);
    }

    /// <summary>A struct handle's record larger than the largest class: a block of <paramref name="length"/> bytes from the
    /// process-wide record pool, its stamp and tag in its trailer (see <see cref="RecordChunks.TakeLarge"/>).</summary>
    internal byte* AllocateLargeRecord(nuint length, nuint alignment, out SlabChunk chunk)
    {
        if (_disposed) ThrowDisposed();
        byte* memory = RecordChunks.TakeLarge(this, length, alignment, out var home, out var life);
        chunk = new SlabChunk(this, -1, memory, -1, length) { Home = home, Life = life };
        if (!TryTrackLarge(chunk))
        {
            RecordChunks.ReturnLarge(home);
            ThrowDisposed();
        }
        return memory;
    }

    private void FreeLargeRaw(byte* p)
    {
        SlabChunk? chunk;
        lock (_largeLock)
        {
            if (_disposed) ThrowDisposed();
            _large.TryGetValue((nint)p, out chunk);
        }
        if (chunk is null) ThrowHelper.ThrowNotOurs("block", $"The pointer 0x{(nuint)p:x} is not a live large block of allocator '{Name}'.");
        FreeDedicated(chunk, deferred: false);
    }

    /// <summary>At Dispose: every dedicated block still held. Record arrays' go when their views are gone, the rest at once.</summary>
    private void ReleaseAllLarge()
    {
        lock (_largeLock)
        {
            foreach (var chunk in _large.Values)
            {
                chunk.Released = true;
                if (chunk.Life is { } life) life.OwnerDisposed = true; // before the stamp moves: a failed check then says "disposed"
                chunk.InvalidateLiveStamps();
                if (chunk.Home is { } home) RecordChunks.ReturnLarge(home);
                else if (chunk.IsRecordArray) chunk.DeferRelease(chunk.Length);
                else NativeMemory.AlignedFree(chunk.Memory);
            }
            _largeFrees += _large.Count; // released by Dispose: counted as frees, as FreeDedicated does
            _large.Clear();
            _largeBytes = 0;
        }
    }
}
