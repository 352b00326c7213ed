using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Manaloc.Memory;

public sealed unsafe partial class NativeSlabAllocator
{
    /// <summary>
    /// The shared state of one size class, guarded by <c>lock (state)</c>: a doubly linked list of its
    /// chunks that have a free or never-carved block, and how many of those are completely empty
    /// (at most one empty chunk is kept per class; the others go back to the system).
    /// </summary>
    private sealed class ClassState(int index)
    {
        public readonly int Index = index;
        public SlabChunk? Available;
        public int EmptyChunks;
    }

    private readonly object _chunkLock = new();
    private SlabChunk?[] _chunkTable = new SlabChunk?[16];
    private readonly Stack<int> _freeChunkIds = new();
    private int _nextChunkId;
    private long _chunkCount;
    private long _reservedBytes;

    /// <summary>Takes up to <paramref name="count"/> blocks of class <paramref name="cls"/>, linked from <paramref name="head"/>.</summary>
    private int TakeFromShared(int cls, int count, out byte* head)
    {
        var state = _classes[cls];
        head = null;
        int taken = 0;
        lock (state)
        {
            if (_disposed) ThrowDisposed();
            while (taken < count)
            {
                var chunk = state.Available ?? AddChunk(state);
                if (chunk.Outstanding == 0) state.EmptyChunks--;
                while (taken < count)
                {
                    byte* p;
                    if (chunk.FreeList != null)
                    {
                        p = chunk.FreeList;
                        chunk.FreeList = *(byte**)p;
                        chunk.FreeCount--;
                    }
                    else if (chunk.Carved < chunk.Capacity)
                    {
                        p = chunk.Blocks + (nint)chunk.Carved * chunk.BlockSize;
                        if (chunk.Carved >= chunk.CarvedBefore) chunk.InitTrailer(p); // a reused record chunk's older slots keep their floor stamp
                        chunk.Carved++;
                    }
                    else
                    {
                        break;
                    }
                    chunk.Outstanding++;
                    *(byte**)p = head;
                    head = p;
                    taken++;
                }
                if (chunk.FreeList == null && chunk.Carved == chunk.Capacity)
                {
                    Unlink(state, chunk);
                }
                Debug.Assert(chunk.Outstanding + chunk.FreeCount == chunk.Carved, "every carved block is out or free");
            }
        }
        return taken;
    }

    /// <summary>Gives a null-terminated list of <paramref name="count"/> blocks back to their chunks; false if disposed.</summary>
    private bool GiveToShared(int cls, byte* head, int count)
    {
        var state = _classes[cls];
        lock (state)
        {
            if (_disposed) return false;
            byte* p = head;
            for (int i = 0; i < count; i++)
            {
                Debug.Assert(p != null, "the list holds count blocks");
                byte* next = *(byte**)p;
                var chunk = ChunkOf(p);
                Debug.Assert(chunk.ClassIndex == cls && !chunk.Released, "a block goes back to a live chunk of its class");
                *(byte**)p = chunk.FreeList;
                chunk.FreeList = p;
                chunk.FreeCount++;
                chunk.Outstanding--;
                if (!chunk.InAvailableList) LinkFirst(state, chunk);
                if (chunk.Outstanding == 0)
                {
                    if (state.EmptyChunks >= 1)
                    {
                        Unlink(state, chunk);
                        ReleaseChunk(chunk);
                    }
                    else
                    {
                        state.EmptyChunks++;
                    }
                }
                p = next;
            }
        }
        return true;
    }

    /// <summary>Frees every completely empty chunk kept for reuse.</summary>
    /// <remarks>Thread-safe. Blocks cached by threads are not empty chunks; call <see cref="FlushThreadCache"/> on those threads first.</remarks>
    public void Trim()
    {
        foreach (var state in _classes)
        {
            lock (state)
            {
                if (_disposed) return;
                for (var chunk = state.Available; chunk is not null;)
                {
                    var next = chunk.Next;
                    if (chunk.Outstanding == 0)
                    {
                        Unlink(state, chunk);
                        state.EmptyChunks--;
                        ReleaseChunk(chunk);
                    }
                    chunk = next;
                }
                Debug.Assert(state.EmptyChunks == 0, "every empty chunk was released");
            }
        }
    }

    // Called under the class lock.
    private SlabChunk AddChunk(ClassState state)
    {
        RecordChunks.Home? home = null;
        RecordChunks.Life? life = null;
        int carvedBefore = 0;
        byte* memory;
        if (OwnedByTypeAllocator)
        {
            // A TypeAllocator's chunk is never freed (struct handles read its stamps with no reference to it): reuse one.
            memory = RecordChunks.Take(this, state.Index, out home, out life, out carvedBefore);
        }
        else
        {
            memory = (byte*)NativeMemory.AlignedAlloc(SizeClasses.ChunkSize, SizeClasses.ChunkSize);
            if (memory == null) ThrowHelper.ThrowOutOfMemory(SizeClasses.ChunkSize);
            ((int*)memory)[1] = state.Index;
        }
        SlabChunk chunk;
        lock (_chunkLock)
        {
            int id = _freeChunkIds.Count > 0 ? _freeChunkIds.Pop() : _nextChunkId++;
            if (id >= _chunkTable.Length)
            {
                var bigger = new SlabChunk?[_chunkTable.Length * 2];
                Array.Copy(_chunkTable, bigger, _chunkTable.Length);
                // Publish the copy before any block of the new chunk leaves the class lock (ChunkOf reads it lock-free).
                Volatile.Write(ref _chunkTable, bigger);
            }
            chunk = new SlabChunk(this, id, memory, state.Index, SizeClasses.ChunkSize) { Home = home, Life = life, CarvedBefore = carvedBefore };
            ((int*)memory)[0] = id;
            _chunkTable[id] = chunk;
            _chunkCount++;
            _reservedBytes += SizeClasses.ChunkSize;
        }
        LinkFirst(state, chunk);
        state.EmptyChunks++;
        return chunk;
    }

    // Called under the class lock; the chunk is empty, so no live block of it is referenced any more. Stale handles may
    // still read their blocks' trailers: the memory goes when the chunk object is collected (SlabChunk.DeferRelease).
    private void ReleaseChunk(SlabChunk chunk)
    {
        Debug.Assert(chunk.Outstanding == 0 && !chunk.Released, "release only an empty live chunk");
        chunk.Released = true;
        lock (_chunkLock)
        {
            _chunkTable[chunk.Id] = null;
            _freeChunkIds.Push(chunk.Id);
            _chunkCount--;
            _reservedBytes -= SizeClasses.ChunkSize;
        }
        // A TypeAllocator's chunk goes back to the process-wide pool (struct handles may read its stamps at any time).
        // Otherwise only a NativeBlock reads chunk memory after its free; an allocator that never handed one out frees at
        // once (a churning raw workload would otherwise keep released chunks until a collection).
        if (chunk.Home is { } home) RecordChunks.Return(home, chunk.Carved);
        else if (_stampedEver) chunk.DeferRelease(SizeClasses.ChunkSize);
        else NativeMemory.AlignedFree(chunk.Memory);
    }

    private void ReleaseAllChunks()
    {
        lock (_chunkLock)
        {
            foreach (var chunk in _chunkTable)
            {
                if (chunk is null) continue;
                chunk.Released = true;
                if (chunk.Life is { } life) life.OwnerDisposed = true; // before the stamps move: a failed check then says "disposed"
                chunk.InvalidateLiveStamps();
                if (chunk.Home is { } home) RecordChunks.Return(home, chunk.Carved);
                else chunk.DeferRelease(SizeClasses.ChunkSize); // handles still reference it; its memory goes when they are gone
            }
            Array.Clear(_chunkTable);
            _chunkCount = 0;
            _reservedBytes = 0;
        }
    }

    private static void LinkFirst(ClassState state, SlabChunk chunk)
    {
        Debug.Assert(!chunk.InAvailableList, "link a chunk once");
        chunk.Prev = null;
        chunk.Next = state.Available;
        if (state.Available is not null) state.Available.Prev = chunk;
        state.Available = chunk;
        chunk.InAvailableList = true;
    }

    private static void Unlink(ClassState state, SlabChunk chunk)
    {
        Debug.Assert(chunk.InAvailableList, "unlink a linked chunk");
        if (chunk.Prev is not null) chunk.Prev.Next = chunk.Next;
        else state.Available = chunk.Next;
        if (chunk.Next is not null) chunk.Next.Prev = chunk.Prev;
        chunk.Prev = chunk.Next = null;
        chunk.InAvailableList = false;
    }

    /// <summary>Visits every live chunk (and large block) under the chunk lock, for statistics and leak reports.</summary>
    internal void VisitChunks(Action<SlabChunk> visit)
    {
        lock (_chunkLock)
        {
            foreach (var chunk in _chunkTable)
            {
                if (chunk is not null) visit(chunk);
            }
        }
        lock (_largeLock)
        {
            foreach (var chunk in _large.Values) visit(chunk);
        }
    }
}
