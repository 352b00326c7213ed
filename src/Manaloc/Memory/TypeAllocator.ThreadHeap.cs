using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

public sealed unsafe partial class TypeAllocator
{
    /// <summary>
    /// The calling thread's cache of a <see cref="TypeAllocator"/>, held by the caller: New and Delete of struct handles
    /// go straight to it, with no thread-static lookup per call (<see cref="NewRef"/> and <see cref="DeleteRef(RecordRef)"/>
    /// find the cache through one on every call). The generated <c>XxxRef.New(heap)</c> and <c>Delete(heap)</c> take one.
    /// </summary>
    /// <remarks>
    /// <para>Thread-bound: obtain one per thread with <see cref="GetThreadHeap"/> and use it on that thread only; a held
    /// heap must not cross an <c>await</c> (the continuation may resume on another thread: get the heap again after it).
    /// Every New and Delete checks the calling thread, exactly, in checked and unchecked allocators alike: a call from
    /// another thread throws <see cref="InvalidOperationException"/> on the first such call, before it touches the
    /// owner's free lists or a record's stamp, so nothing is handed out twice and the statistics stay exact. The check is
    /// one compare of the calling thread's key (a thread-static number, never reused) with the owner's. Every call also checks
    /// disposal (one compare: a use after the allocator's Dispose throws <see cref="ObjectDisposedException"/>).</para>
    /// <para>Records are those of the allocator: one made through a heap may be deleted through
    /// <see cref="DeleteRef(RecordRef)"/> on any thread, or through another thread's heap, and the other way round. The
    /// checks of the handles are the same as through the allocator. After the thread exits, drop the heap (it keeps that
    /// thread's cache of free blocks).</para>
    /// </remarks>
    public sealed unsafe partial class ThreadHeap
    {
        private readonly TypeAllocator _owner;
        private readonly NativeSlabAllocator.ThreadCache _cache;
        private readonly NativeSlabAllocator _slab;
        private readonly NativeSlabAllocator.Bin* _bins; // into the cache's pinned bins, which _cache keeps alive
        private readonly Thread _thread; // the owner, for ThreadId and the misuse message
        private readonly long _ownerKey; // the owner's HeapThreadCheck key, which every call compares
        private readonly long _token; // the allocator's owner token, as chunk headers hold it (checked Delete's test)
        private uint _calls; // the sampled check's count (benchmarks only, see HeapThreadCheck)
        // What sends a New off the fast path, one byte so the fast path tests it with one compare: Dead (set by the
        // allocator's Dispose; read with Volatile.Read so the JIT never hoists it out of a loop) and CaptureStacks.
        private byte _slow;
        private const byte Dead = 1, CaptureStacks = 2;

        internal ThreadHeap(TypeAllocator owner, NativeSlabAllocator.ThreadCache cache)
        {
            _owner = owner;
            _cache = cache;
            _slab = owner._slab;
            _bins = cache.Bins;
            _thread = Thread.CurrentThread;
            _ownerKey = HeapThreadCheck.CurrentKey;
            _token = owner._slab.RecordToken;
            _slow = owner._stacks is not null ? CaptureStacks : (byte)0;
        }

        /// <summary>Called by the allocator's Dispose: every later New through this heap throws.</summary>
        internal void MarkDead() => Volatile.Write(ref _slow, (byte)(_slow | Dead)); // Dispose is not concurrent with use (documented)

        /// <summary>The allocator this heap belongs to.</summary>
        public TypeAllocator Allocator => _owner;

        /// <summary>The managed id of the thread that may use this heap.</summary>
        public int ThreadId => _thread.ManagedThreadId;

        /// <summary>As <see cref="TypeAllocator.NewRef"/>: a zeroed record and a checked handle to it.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
        /// <exception cref="InvalidOperationException">Called on another thread than the heap's.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public RecordRef New(CompiledRecordType type)
        {
            var record = RecordOf(type);
            Check();
            var block = _owner.AllocateRecord(_bins, record);
            return new RecordRef(block.Address, block.Generation, record.StampOffset);
        }

        /// <summary>As <see cref="TypeAllocator.NewUncheckedRef"/>: a zeroed record and an unchecked handle to it.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
        /// <exception cref="InvalidOperationException">Called on another thread than the heap's.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public UncheckedRecordRef NewUnchecked(CompiledRecordType type)
        {
            var record = RecordOf(type);
            Check();
            var block = _owner.AllocateRecord(_bins, record);
            return new UncheckedRecordRef(block.Address, block.Generation, record.StampOffset);
        }

        /// <summary>As <see cref="TypeAllocator.DeleteRef(RecordRef)"/>.</summary>
        /// <exception cref="ArgumentException">The handle is default or belongs to another allocator.</exception>
        /// <exception cref="InvalidOperationException">The record was already deleted, or the heap is used on another thread.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Delete(RecordRef handle)
        {
            CheckThread();
            _owner.DeleteRecord(_bins, handle);
        }

        /// <summary>As <see cref="TypeAllocator.DeleteRef(UncheckedRecordRef)"/>.</summary>
        /// <exception cref="ArgumentException">The handle is default or belongs to another allocator.</exception>
        /// <exception cref="InvalidOperationException">The record was already deleted, or the heap is used on another thread.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Delete(UncheckedRecordRef handle)
        {
            CheckThread();
            _owner.DeleteUncheckedRecord(_bins, handle);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void Check()
        {
            // Dispose marks every heap of the allocator dead (before the chunks go), so one load covers disposal. The thread
            // test keeps the cache single-threaded, which is what lets its pops and pushes go without atomics.
            if ((Volatile.Read(ref _slow) & Dead) != 0 || HeapThreadCheck.IsForeign(_ownerKey, ref _calls)) ThrowMisuse();
        }

        /// <summary>
        /// Delete checks the thread only: after the allocator's Dispose every stamp it handed out has moved on, so Delete's
        /// own test of the stamp refuses the handle (and says "disposed") before anything reaches the cache.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void CheckThread()
        {
            if (HeapThreadCheck.IsForeign(_ownerKey, ref _calls)) ThrowMisuse();
        }

        [DoesNotReturn]
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowMisuse()
        {
            if ((Volatile.Read(ref _slow) & Dead) != 0 || _cache.Owner != _slab) _owner.ThrowDisposed();
            ThrowHelper.ThrowWrongThread($"TypeAllocator '{_owner.Name}'", _thread);
        }
    }

    /// <summary>The calling thread's heap: its cache of this allocator, to hold and use on this thread without a lookup per call.</summary>
    /// <remarks>Thread-safe; each thread gets its own (the same object on every call from one thread). The heap is bound to
    /// this thread: another thread's New or Delete through it throws, so do not keep one across an <c>await</c>.</remarks>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    public ThreadHeap GetThreadHeap()
    {
        if (_disposed) ThrowDisposed();
        var cache = _slab.CurrentCache;
        return cache.RecordHeap ??= new ThreadHeap(this, cache);
    }
}
