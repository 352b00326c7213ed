using System.Runtime.InteropServices;

namespace Manaloc.Memory;

public sealed unsafe partial class NativeSlabAllocator
{
    // Large blocks (above the largest class, or aligned beyond 64) go straight to the system. They
    // are aligned to the chunk size, which is how Free(void*) tells them from class blocks (those
    // never start on a chunk boundary: the chunk header is there). Guarded by _largeLock.
    private readonly object _largeLock = new();
    private readonly Dictionary<nint, SlabChunk> _large = [];
    private long _largeBytes;
    private long _largeAllocations;
    private long _largeFrees;

    private byte* AllocateLarge(nuint size, nuint alignment, out SlabChunk chunk)
    {
        if (_disposed) MemoryThrowHelper.ThrowDisposed(nameof(NativeSlabAllocator));
        nuint length = size == 0 ? 1 : size;
        byte* memory = (byte*)NativeMemory.AlignedAlloc(length, Math.Max(alignment, SizeClasses.ChunkSize));
        if (memory == null) MemoryThrowHelper.ThrowOutOfMemory(length);
        chunk = new SlabChunk(this, -1, memory, -1, length, _tagged, _trackHandles);
        lock (_largeLock)
        {
            if (_disposed)
            {
                NativeMemory.AlignedFree(memory);
                MemoryThrowHelper.ThrowDisposed(nameof(NativeSlabAllocator));
            }
            _large.Add((nint)memory, chunk);
            _largeBytes += (long)length;
            _largeAllocations++;
        }
        return memory;
    }

    private void FreeLarge(SlabChunk chunk)
    {
        lock (_largeLock)
        {
            if (_disposed) MemoryThrowHelper.ThrowDisposed(nameof(NativeSlabAllocator));
            if (!_large.Remove((nint)chunk.Memory)) ThrowHelper.ThrowInvalidOperation("The large block was already freed.");
            chunk.Released = true;
            _largeBytes -= (long)chunk.Length;
            _largeFrees++;
        }
        NativeMemory.AlignedFree(chunk.Memory);
    }

    private void FreeLargeRaw(byte* p)
    {
        SlabChunk? chunk;
        lock (_largeLock)
        {
            if (_disposed) MemoryThrowHelper.ThrowDisposed(nameof(NativeSlabAllocator));
            _large.TryGetValue((nint)p, out chunk);
        }
        if (chunk is null) MemoryThrowHelper.ThrowNotOurs("block", $"The pointer 0x{(nuint)p:x} is not a live large block of allocator '{Name}'.");
        FreeLarge(chunk);
    }

    private void ReleaseAllLarge()
    {
        lock (_largeLock)
        {
            foreach (var chunk in _large.Values)
            {
                chunk.Released = true;
                chunk.InvalidateLiveStamps();
                NativeMemory.AlignedFree(chunk.Memory);
            }
            _largeFrees += _large.Count; // released by Dispose: counted as frees, as FreeLarge does
            _large.Clear();
            _largeBytes = 0;
        }
    }
}
