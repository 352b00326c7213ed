using System.Diagnostics.CodeAnalysis;
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
    /// <para>Thread-bound: obtain one per thread with <see cref="GetThreadHeap"/> and use it on that thread
    /// only; a held heap must not cross an <c>await</c> (the continuation may resume on another thread). Every
    /// <see cref="Allocate"/> and <see cref="Free"/> checks the calling thread, exactly: a call from another thread
    /// throws <see cref="InvalidOperationException"/> on the first such call, before it touches the owner's free
    /// lists, so no block is handed out twice and the statistics stay exact. The check is one compare of the calling
    /// thread's key (a thread-static number, never reused) with the owner's. Every call also checks disposal (one compare of
    /// a field: a use after the allocator's Dispose throws <see cref="ObjectDisposedException"/>).</para>
    /// <para>Blocks are those of the allocator: a block from <see cref="Allocate"/> may be freed by
    /// <see cref="NativeSlabAllocator.Free(void*)"/> on any thread, or by another thread's heap, and the other
    /// way round. Holding a heap keeps its thread's cache: after the thread exits, drop the heap (or call
    /// <see cref="NativeSlabAllocator.FlushThreadCache"/> on the thread first) so its blocks go back.</para>
    /// </remarks>
    public sealed class ThreadHeap
    {
        private readonly NativeSlabAllocator _owner;
        private readonly ThreadCache _cache;
        private readonly Thread _thread; // the owner, for ThreadId and the misuse message
        private readonly long _ownerKey; // the owner's HeapThreadCheck key, which every call compares
        private uint _calls; // the sampled check's count (benchmarks only, see HeapThreadCheck)

        internal ThreadHeap(NativeSlabAllocator owner, ThreadCache cache)
        {
            _owner = owner;
            _cache = cache;
            _thread = Thread.CurrentThread;
            _ownerKey = HeapThreadCheck.CurrentKey;
        }

        /// <summary>The allocator this heap belongs to.</summary>
        public NativeSlabAllocator Allocator => _owner;

        /// <summary>The managed id of the thread that may use this heap.</summary>
        public int ThreadId => _thread.ManagedThreadId;

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
            // the cache single-threaded, which is what lets its pops and pushes go without atomics.
            if (_cache.Owner != _owner || HeapThreadCheck.IsForeign(_ownerKey, ref _calls)) ThrowMisuse();
        }

        [DoesNotReturn]
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowMisuse()
        {
            if (_cache.Owner != _owner) _owner.ThrowDisposed();
            ThrowHelper.ThrowWrongThread($"NativeSlabAllocator '{_owner.Name}'", _thread);
        }
    }

    /// <summary>The calling thread's heap: its cache of this allocator, to hold and use on this thread without a lookup per call.</summary>
    /// <remarks>Thread-safe; each thread gets its own (the same object on every call from one thread). The heap is bound to
    /// this thread: another thread's Allocate or Free through it throws, so do not keep one across an <c>await</c>.</remarks>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    public ThreadHeap GetThreadHeap()
    {
        var cache = GetCache();
        return cache.Heap ??= new ThreadHeap(this, cache);
    }
}
