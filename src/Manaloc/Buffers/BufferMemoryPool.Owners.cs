using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Manaloc.Pooling;

namespace Manaloc.Buffers;

public sealed partial class BufferMemoryPool
{
    /// <summary>
    /// The owner a rent returns outside diagnostic mode. Pooled process-wide (one semi-local pool), so a rent and its
    /// Dispose allocate nothing after warm-up.
    /// </summary>
    /// <remarks>
    /// <para>Ordering. <c>_rented</c> is the owner's one piece of shared state. <see cref="Rent"/> runs while the owner
    /// is exclusively the renting thread's (just taken from the owner pool): it stores the pool and array, then
    /// publishes <c>_rented = 1</c> with a release write; the reference reaches other threads only after that. The
    /// first Dispose wins an <see cref="Interlocked.Exchange(ref int, int)"/> of <c>_rented</c> to 0 (a full fence, so
    /// its later loads of <c>_array</c> and <c>_pool</c> see the renter's stores); every other Dispose, concurrent or
    /// later, reads 0 from the exchange and does nothing. Only the winner touches the array, and it returns the
    /// owner to the owner pool last, after which nothing of this rent is read: the pool hands it to the next renter
    /// with a happens-before edge of its own.</para>
    /// <para>What no pooled owner can do: after the owner went back and a later rent took it, a stale reference is
    /// the same reference as the new renter's, so its Dispose is the new rent's Dispose. A version number cannot help:
    /// the stale holder has no number of its own to compare, only the shared object. A distinct object per rent can,
    /// and that is what diagnostic mode gives (<see cref="DiagnosticMemoryOwner"/>), at an allocation per rent.</para>
    /// </remarks>
    private sealed class PooledMemoryOwner : IMemoryOwner<byte>
    {
        private static readonly PoolTier<PooledMemoryOwner> s_owners = new(
            PoolPolicies.Create(static () => new PooledMemoryOwner()),
            new PoolOptions { Name = "buffers.memory-owners", TrimAfterGen2 = true });

        private BufferMemoryPool? _pool;
        private byte[]? _array;
        private int _rented; // 1 from Rent to the first Dispose

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static PooledMemoryOwner Rent(BufferMemoryPool pool, byte[] array)
        {
            var owner = s_owners.Rent();
            owner._pool = pool;
            owner._array = array;
            Volatile.Write(ref owner._rented, 1); // release: the stores above are visible to whoever sees the owner rented
            return owner;
        }

        public Memory<byte> Memory
        {
            get
            {
                var array = _array;
                if (array is null || Volatile.Read(ref _rented) == 0) ThrowDisposed();
                return new Memory<byte>(array);
            }
        }

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _rented, 0) == 0) return; // disposed already: repeats and racing Disposes stop here
            var pool = _pool!;
            var array = _array!;
            _pool = null;
            _array = null;
            pool.ReturnArray(array);
            s_owners.Return(this); // last: from here on the owner may be another rent's
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void ThrowDisposed()
            => throw new ObjectDisposedException(nameof(BufferMemoryPool), "This memory owner from a BufferMemoryPool was disposed: its array went back to the pool and may be another renter's now.");
    }

    /// <summary>
    /// Diagnostic mode's owner, one per rent: a <see cref="MemoryManager{T}"/>, so the memory it hands out reaches the
    /// array only through <see cref="GetSpan"/> and <see cref="Pin"/>, which check that the owner is still rented. A
    /// span taken from that memory after Dispose throws, naming the pool (a span taken before Dispose is a raw reference
    /// and cannot be checked: do not keep one).
    /// </summary>
    /// <remarks>Ordering: as <see cref="PooledMemoryOwner"/>: the exchange of <c>_rented</c> picks the one Dispose that returns the array.
    /// The array field is never cleared, so a racing <see cref="GetSpan"/> either throws or reads a valid array.</remarks>
    private sealed class DiagnosticMemoryOwner(BufferMemoryPool pool, byte[] array) : MemoryManager<byte>
    {
        private int _rented = 1;

        public override Memory<byte> Memory
        {
            get
            {
                if (Volatile.Read(ref _rented) == 0) pool.ThrowOwnerDisposed();
                return base.Memory;
            }
        }

        public override Span<byte> GetSpan()
        {
            if (Volatile.Read(ref _rented) == 0) pool.ThrowOwnerDisposed();
            return array;
        }

        public override unsafe MemoryHandle Pin(int elementIndex = 0)
        {
            if (Volatile.Read(ref _rented) == 0) pool.ThrowOwnerDisposed();
            if ((uint)elementIndex > (uint)array.Length) ThrowHelper.ThrowArgumentOutOfRange(nameof(elementIndex), elementIndex, "The index must lie within the buffer.");
            var handle = GCHandle.Alloc(array, GCHandleType.Pinned);
            return new MemoryHandle(Unsafe.Add<byte>((void*)handle.AddrOfPinnedObject(), elementIndex), handle, this);
        }

        public override void Unpin()
        {
            // The MemoryHandle frees its GCHandle itself; nothing is counted here.
        }

        protected override void Dispose(bool disposing)
        {
            if (Interlocked.Exchange(ref _rented, 0) == 0) return;
            pool.ReturnArray(array);
        }
    }
}
