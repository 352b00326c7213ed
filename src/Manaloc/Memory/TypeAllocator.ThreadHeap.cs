using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
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
    public sealed unsafe class ThreadHeap
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
        public UncheckedRecordRef NewUnchecked(CompiledRecordType type) => New(type).AsUnchecked(); // as New; only the handle's checks differ

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

        // The generated XxxRef.New(heap) and Delete(heap) come here, through their RecordRef<TRecord> or
        // UncheckedRecordRef<TRecord> (CompilerServices: plumbing, not this type's surface). The record's layout is a set of JIT constants
        // (CompiledRecordConstants<TRecord>), so a New is the bin's pop, the stamp, the tag and two or three vector stores,
        // and a Delete the stamp's test and the push: no record-type object is read. Records larger than the largest class
        // and unregistered type arguments take the general path.

        /// <summary>As <see cref="New(CompiledRecordType)"/>, for the generated struct handles.</summary>
        /// <exception cref="InvalidOperationException">Called on another thread than the heap's, or <typeparamref name="TRecord"/> is not a generated registration.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal RecordRef<TRecord> New<TRecord>() where TRecord : struct, ICompiledRecordFactory
        {
            var block = Allocate<TRecord>();
            return new(block.Address, block.Generation);
        }

        /// <summary>As <see cref="NewUnchecked(CompiledRecordType)"/>, for the generated struct handles.</summary>
        /// <exception cref="InvalidOperationException">Called on another thread than the heap's, or <typeparamref name="TRecord"/> is not a generated registration.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal UncheckedRecordRef<TRecord> NewUnchecked<TRecord>() where TRecord : struct, ICompiledRecordFactory
        {
            var block = Allocate<TRecord>();
            return new(block.Address, block.Generation);
        }

        /// <summary>As <see cref="Delete(RecordRef)"/>.</summary>
        /// <exception cref="ArgumentException">The handle is default or belongs to another allocator.</exception>
        /// <exception cref="InvalidOperationException">The record was already deleted, or the heap is used on another thread.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Delete<TRecord>(RecordRef<TRecord> handle) where TRecord : struct, ICompiledRecordFactory
        {
            int cls = CompiledRecordConstants<TRecord>.ClassIndex;
            byte* p = handle.Address;
            // As TypeAllocator.DeleteRecord: the owner's token in the chunk header, then the stamp's compare-exchange, which
            // makes exactly one of two racing Deletes free the block.
            // The thread test comes first: a foreign thread is sent to the general path, which refuses it before the stamp.
            if (cls >= 0 && p != null && !HeapThreadCheck.IsForeign(_ownerKey, ref _calls) && *(long*)(SizeClasses.ChunkStart(p) + 16) == _token
                && NativeSlabAllocator.TryReleaseStamp(ref *(uint*)(p + CompiledRecordConstants<TRecord>.StampOffset), handle.Generation))
            {
                Release(p, cls);
                return;
            }
            DeleteOther(p, handle.Generation, CompiledRecordConstants<TRecord>.StampOffset); // large, default, foreign, stale
        }

        /// <summary>As <see cref="Delete(UncheckedRecordRef)"/>.</summary>
        /// <exception cref="ArgumentException">The handle is default.</exception>
        /// <exception cref="InvalidOperationException">The record was already deleted, or the heap is used on another thread.</exception>
        /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Delete<TRecord>(UncheckedRecordRef<TRecord> handle) where TRecord : struct, ICompiledRecordFactory
        {
            int cls = CompiledRecordConstants<TRecord>.ClassIndex;
            byte* p = handle.Address;
            if (cls >= 0 && p != null && !HeapThreadCheck.IsForeign(_ownerKey, ref _calls))
            {
                // As TypeAllocator.DeleteUncheckedRecord: a plain test and store of the stamp (racing Deletes are undefined).
                ref uint stamp = ref *(uint*)(p + CompiledRecordConstants<TRecord>.StampOffset);
                if (stamp == handle.Generation)
                {
                    stamp = handle.Generation + 1;
                    Release(p, cls);
                    return;
                }
            }
            DeleteOtherUnchecked(p, handle.Generation, CompiledRecordConstants<TRecord>.StampOffset);
        }

        // The general paths, with the handle's fields passed by value: a call on the handle itself would take its address,
        // and a struct whose address is taken lives on the stack instead of in registers in the caller's loop.
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void DeleteOther(byte* p, uint generation, int stampOffset) => Delete(new RecordRef(p, generation, p == null ? 0 : stampOffset));

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void DeleteOtherUnchecked(byte* p, uint generation, int stampOffset) => Delete(new UncheckedRecordRef(p, generation, p == null ? 0 : stampOffset));

        /// <summary>A zeroed, stamped, tagged block of <typeparamref name="TRecord"/>'s class from this heap's bins.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private RecordBlock Allocate<TRecord>() where TRecord : struct, ICompiledRecordFactory
        {
            int cls = CompiledRecordConstants<TRecord>.ClassIndex;
            // A foreign thread goes to the general path too, whose check refuses it before any bin is touched.
            if (cls < 0 || Volatile.Read(ref _slow) != 0 || HeapThreadCheck.IsForeign(_ownerKey, ref _calls)) return AllocateOther<TRecord>();
            NativeSlabAllocator.Bin* bin = _bins + cls;
            bin->Allocations++;
            // The bin's pop, inlined here so the fast path does not touch the slab object (a refill does).
            byte* p = bin->Head;
            if (p == null)
            {
                p = RefillBin(bin, cls);
            }
            else
            {
                bin->Head = *(byte**)p;
                bin->Count--;
            }
            int stampOffset = CompiledRecordConstants<TRecord>.StampOffset;
            // Plain writes, as in TypeAllocator.AllocateRecord: this thread owns the free block.
            ref uint stamp = ref *(uint*)(p + stampOffset);
            uint generation = stamp = (stamp + 1) | 1; // free stamps are even: the next value, odd, live
            *(uint*)(p + stampOffset - 4) = CompiledRecordConstants<TRecord>.TagAndClass;
            Clear(p, CompiledRecordConstants<TRecord>.ClearBytes);
            return new RecordBlock(p, generation);
        }

        /// <summary>The general path: a record larger than the largest class, a type argument nobody registered, a dead heap or a foreign thread (it throws), stack capture.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private RecordBlock AllocateOther<TRecord>() where TRecord : struct, ICompiledRecordFactory
        {
            var type = CompiledRecordConstants<TRecord>.Type;
            if (type is null) ThrowHelper.ThrowNotRegistered(typeof(TRecord));
            var handle = New(type);
            return new RecordBlock(handle.Address, handle.Generation);
        }

        /// <summary>Zeroes the first <paramref name="clear"/> bytes (a multiple of 8; a JIT constant here, so the tests fold away).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private static void Clear(byte* p, int clear)
        {
            if (clear > 64)
            {
                ClearLong(p, clear);
                return;
            }
            // Class blocks are 16-byte aligned: whole vectors, then one 8-byte store when the record ends on an odd 8.
            if (clear >= 16) *(Vector128<byte>*)p = Vector128<byte>.Zero;
            if (clear >= 32) *(Vector128<byte>*)(p + 16) = Vector128<byte>.Zero;
            if (clear >= 48) *(Vector128<byte>*)(p + 32) = Vector128<byte>.Zero;
            if (clear >= 64) *(Vector128<byte>*)(p + 48) = Vector128<byte>.Zero;
            if ((clear & 8) != 0) *(ulong*)(p + (clear & ~15)) = 0;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void ClearLong(byte* p, int clear) => System.Runtime.InteropServices.NativeMemory.Clear(p, (nuint)clear);

        /// <summary>Refills an empty bin for the typed New, which counted the allocation before popping.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private byte* RefillBin(NativeSlabAllocator.Bin* bin, int cls)
        {
            try
            {
                return _slab.Refill(ref *bin, cls);
            }
            catch
            {
                bin->Allocations--; // counted above; a refill that fails (out of memory) allocated nothing
                throw;
            }
        }

        /// <summary>Puts a block whose stamp this thread just released back in this heap's bin.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void Release(byte* p, int cls)
        {
            if (_slow != 0) _owner.ForgetStack(p); // a no-op unless stacks are captured
            NativeSlabAllocator.Bin* bin = _bins + cls;
            *(byte**)p = bin->Head;
            bin->Head = p;
            if (++bin->Count > bin->Limit) _slab.Flush(bin, cls); // as NativeSlabAllocator.Push
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
