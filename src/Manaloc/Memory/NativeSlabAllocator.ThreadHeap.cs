using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

public sealed unsafe partial class NativeSlabAllocator
{
    /// <summary>
    /// The calling thread's cache of a <see cref="NativeSlabAllocator"/>, held by the caller:
    /// <see cref="Allocate"/> and <see cref="Free"/> go straight to it, with no thread-static lookup per
    /// call (<see cref="NativeSlabAllocator.Allocate(nuint)"/> and <see cref="NativeSlabAllocator.Free(void*)"/>
    /// find the cache through one on every call).
    /// </summary>
    /// <remarks>
    /// <para>Thread-affine: obtain one per thread with <see cref="GetThreadHeap"/> and use it on that thread
    /// only. Every call checks disposal (one compare of a field: a use after the allocator's Dispose throws
    /// <see cref="ObjectDisposedException"/>). Thread affinity is checked on one call in
    /// <see cref="AffinityCheckInterval"/> and when the heap is handed out: asking the runtime for the current
    /// thread costs more than the whole allocation here (8–15 ns measured on Linux x64, against 6–7 ns for an
    /// allocation and free), so a use on another thread throws <see cref="InvalidOperationException"/> within that
    /// many calls; until then it races the owner's cache, which is undefined like any misuse of the raw-pointer
    /// API this is part of.</para>
    /// <para>Blocks are those of the allocator: a block from <see cref="Allocate"/> may be freed by
    /// <see cref="NativeSlabAllocator.Free(void*)"/> on any thread, or by another thread's heap, and the other
    /// way round. Holding a heap keeps its thread's cache: after the thread exits, drop the heap (or call
    /// <see cref="NativeSlabAllocator.FlushThreadCache"/> on the thread first) so its blocks go back.</para>
    /// </remarks>
    public sealed class ThreadHeap
    {
        /// <summary>One call in this many checks the calling thread.</summary>
        public const int AffinityCheckInterval = 64;

        private readonly NativeSlabAllocator _owner;
        private readonly ThreadCache _cache;
        private readonly int _threadId;
        private uint _calls; // written by the owning thread only (a misusing thread races it, and is caught all the same)

        internal ThreadHeap(NativeSlabAllocator owner, ThreadCache cache)
        {
            _owner = owner;
            _cache = cache;
            _threadId = Environment.CurrentManagedThreadId;
        }

        /// <summary>The allocator this heap belongs to.</summary>
        public NativeSlabAllocator Allocator => _owner;

        /// <summary>The managed id of the thread that may use this heap.</summary>
        public int ThreadId => _threadId;

        /// <summary>The cache, after the affinity and disposal checks (for the allocator's own stamped paths, e.g. TypeAllocator and generated handles).</summary>
        internal ThreadCache Cache
        {
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get
            {
                Check();
                return _cache;
            }
        }

        /// <summary>As <see cref="NativeSlabAllocator.Allocate(nuint)"/>: <paramref name="size"/> bytes, 16-byte aligned, not zeroed.</summary>
        /// <exception cref="InvalidOperationException">Called on another thread than the heap's.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        /// <exception cref="OutOfMemoryException">The system refused a new chunk.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void* Allocate(nuint size)
        {
            Check();
            if (size <= SizeClasses.SmallLimit) return _owner.AllocateFromClass(_cache, SizeClasses.ForSmall(size));
            return _owner.Allocate(size);
        }

        /// <summary>As <see cref="NativeSlabAllocator.Free(void*)"/>: frees a block of this allocator (unchecked); null is ignored.</summary>
        /// <exception cref="InvalidOperationException">Called on another thread than the heap's.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Free(void* block)
        {
            Check();
            if (block == null) return;
            nuint address = (nuint)block;
            if ((address & (SizeClasses.ChunkSize - 1)) == 0)
            {
                _owner.Free(block); // a large block
                return;
            }
            int cls = ((int*)(address & ~(nuint)(SizeClasses.ChunkSize - 1)))[1];
            _owner.FreeToClass(_cache, (byte*)block, cls);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void Check()
        {
            // Dispose clears the cache's owner (before the chunks go), so one compare covers disposal. The thread test keeps
            // the cache single-threaded, which is what lets its pops and pushes go without atomics; sampled (see remarks).
            if (_cache.Owner != _owner || (++_calls % AffinityCheckInterval == 0 && Environment.CurrentManagedThreadId != _threadId)) ThrowMisuse();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowMisuse()
        {
            if (_cache.Owner != _owner) ThrowHelper.ThrowDisposed(nameof(NativeSlabAllocator));
            ThrowHelper.ThrowInvalidOperation($"This ThreadHeap belongs to managed thread {_threadId}; it was used on thread {Environment.CurrentManagedThreadId}. Get one per thread with GetThreadHeap.");
        }
    }

    /// <summary>The calling thread's heap: its cache of this allocator, to hold and use on this thread without a lookup per call.</summary>
    /// <remarks>Thread-safe; each thread gets its own (the same object on every call from one thread).</remarks>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    public ThreadHeap GetThreadHeap()
    {
        var cache = GetCache();
        return cache.Heap ??= new ThreadHeap(this, cache);
    }
}
