using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Manaloc.Pooling;
using Manaloc.Threading;

namespace Manaloc.Buffers;

public sealed partial class BufferMemoryPool
{
    /// <summary>
    /// One power-of-two size class of the pool: its idle owners, each still holding its array, and the class's counters.
    /// Also the policy of its owner tier: a new owner rents its array from the manager once, and keeps it for life.
    /// </summary>
    /// <remarks>
    /// <para>Why owners keep their arrays: a pipe rents on the writer's thread and disposes on the reader's, so every
    /// segment crosses threads. Pooling arrays (in the manager) and owners (in a pool of their own) separately paid two
    /// pool operations per rent and per Dispose, each missing the per-thread hot slot and going through the thread
    /// stacks and shared tier; an owner that holds its array pays one. The tier is a semi-local pool with larger batches
    /// than the manager's small classes, because the cross-thread flow moves whole batches through its shared tier, and shorter thread stacks for large classes (see <see cref="ThreadBytes"/>).</para>
    /// <para>Counters: one striped counter per side (the renting thread adds to <see cref="Rents"/>, the disposing
    /// thread to <see cref="Returns"/>), so the pool's statistics stay exact at one atomic add per operation; the
    /// bytes follow from the class size.</para>
    /// <para>What leaves the tier (its cap, gen-2 trimming, the idle release on the manager's clock and period, the
    /// pool's Dispose) gives its array back to the manager, once (<see cref="PooledMemoryOwner.OnDroppedByPool"/>), so the
    /// manager's statistics and meters see it returned; the owner itself goes to the GC.</para>
    /// <para>Idle owners reference their class and so the pool: a pool dropped without Dispose lives on while threads'
    /// stacks hold its idle owners, until the idle release takes them (within 1.5 idle periods).</para>
    /// <para>Thread safety: every member is safe from any thread.</para>
    /// </remarks>
    private sealed class OwnerClass : PoolPolicy<PooledMemoryOwner>
    {
        /// <summary>
        /// The bytes a thread keeps idle for itself in one class (in owners, 2 to 32; half of them move to or from the
        /// shared tier at once). Small on purpose: in a pipe the disposing thread never rents, so its stack is a delay
        /// line that every array passes through; the shorter it is, the fewer distinct arrays cycle through the caches
        /// (64 KiB segments: 2 per thread, not the manager's 8; 4 KiB segments: 16).
        /// </summary>
        private const int ThreadBytes = 64 << 10;

        public readonly BufferMemoryPool Pool;
        public readonly int Size;
        public readonly PoolTier<PooledMemoryOwner> Owners;
        public readonly StripedCounter Rents = new();
        public readonly StripedCounter Returns = new();

        /// <summary>The manager's <see cref="BufferManagerOptions.PoisonReturnedBuffers"/>: an owner's array is poisoned on Dispose, since it never goes back to the manager.</summary>
        public readonly bool Poison;

        public OwnerClass(BufferMemoryPool pool, int size)
        {
            Pool = pool;
            Size = size;
            var manager = pool._manager;
            Poison = manager.PoisonsReturnedBuffers;
            // The manager's byte cap per class, in owners (each holds one array of the class).
            int retained = (int)Math.Clamp(manager.MaxRetainedBytesPerClass / size, size <= 1 << 21 ? 8 : 1, 4096);
            int perThread = Math.Min(retained, Math.Clamp(ThreadBytes / size, 2, 32));
            Owners = new PoolTier<PooledMemoryOwner>(this, new PoolOptions
            {
                Name = $"{pool.Name}/{size}",
                LocalCapacity = perThread,
                BatchSize = Math.Max(1, perThread / 2),
                MaxRetained = retained,
                TrimAfterGen2 = manager.TrimsAfterGen2,
                Gen2TrimInterval = Gen2TrimGate.BufferInterval, // as the manager's own tiers
                ReleaseIdleAfter = manager.ReleaseIdleAfter,
                TimeProvider = manager.TimeProvider,
            });
        }

        /// <summary>A new owner with an array of the class from the manager (the tier calls this when it holds no idle owner).</summary>
        public override PooledMemoryOwner Create() => new(this, Pool._manager.Rent(Size));

        /// <summary>Owners are stored as they come back: the Dispose that returns one has already ended its rent.</summary>
        internal override bool ResetsObjects => false;
    }

    /// <summary>
    /// The owner a rent returns outside diagnostic mode: bound for life to one array of its class, pooled in the class's
    /// tier, so after warm-up a rent and its Dispose allocate nothing and touch no other pool.
    /// </summary>
    /// <remarks>
    /// <para>Ordering. <c>_rented</c> is the owner's one piece of shared state; its class and array never change. A rent
    /// takes the owner from the tier (which hands it over with a happens-before edge of its own), then publishes
    /// <c>_rented = 1</c> with a release write; the reference reaches other threads only after that. The first Dispose
    /// wins an <see cref="Interlocked.CompareExchange(ref int, int, int)"/> of <c>_rented</c> from rented to idle (a full fence); every other
    /// Dispose, concurrent or later, reads 0 and does nothing. Only the winner gives the owner back to the tier, so it
    /// is stored once per rent; nothing of the rent is read after that.</para>
    /// <para>What no pooled owner can do: after the owner went back and a later rent took it, a stale reference is the
    /// same reference as the new renter's, so its Dispose is the new rent's Dispose. A version number cannot help: the
    /// stale holder has no number of its own to compare, only the shared object. A distinct object per rent can, and
    /// that is what diagnostic mode gives (<see cref="DiagnosticMemoryOwner"/>), at an allocation per rent.</para>
    /// </remarks>
    private sealed class PooledMemoryOwner(OwnerClass owners, byte[] array) : IMemoryOwner<byte>, IDroppedByPool
    {
        private const int Idle = 0, Rented = 1, Dropped = -1;
        private int _rented; // Rented from a rent to its first Dispose; Idle in the tier; Dropped once the tier let it go

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static PooledMemoryOwner Rent(OwnerClass owners)
        {
            var owner = owners.Owners.Rent();
            Volatile.Write(ref owner._rented, Rented); // release: whoever sees the owner rented sees it as the tier handed it over
            owners.Rents.Increment();
            return owner;
        }

        public Memory<byte> Memory
        {
            get
            {
                if (Volatile.Read(ref _rented) != Rented) ThrowDisposed();
                return new Memory<byte>(array);
            }
        }

        public void Dispose()
        {
            if (Interlocked.CompareExchange(ref _rented, Idle, Rented) != Rented) return; // disposed already, idle in the tier or dropped: repeats and racing Disposes stop here
            owners.Returns.Increment();
            if (owners.Poison) BufferManager.Poison(array); // before the owner can be rented again
            owners.Owners.Return(this); // last: from here on the owner may be another rent's (after the pool's Dispose the tier drops it)
        }

        /// <summary>
        /// The tier dropped this idle owner: its array goes back to the manager, once. The tier drops only what it holds
        /// (idle), and the compare-exchange from idle to dropped orders this against a stale Dispose (which finds the owner
        /// not rented and stops), so the array is returned exactly once and the owner is never rented again.
        /// </summary>
        public void OnDroppedByPool()
        {
            if (Interlocked.CompareExchange(ref _rented, Dropped, Idle) == Idle) owners.Pool._manager.Return(array);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowDisposed() => owners.Pool.ThrowOwnerDisposed();
    }

    /// <summary>What <c>Rent(0)</c> returns: empty memory, nothing to give back, so one shared instance; not counted.</summary>
    private sealed class EmptyMemoryOwner : IMemoryOwner<byte>
    {
        public static readonly EmptyMemoryOwner Instance = new();

        public Memory<byte> Memory => Memory<byte>.Empty;

        public void Dispose()
        {
        }
    }

    /// <summary>
    /// Diagnostic mode's owner, one per rent, its array rented from the manager and returned to it by the first Dispose:
    /// a <see cref="MemoryManager{T}"/>, so the memory it hands out reaches the array only through <see cref="GetSpan"/>
    /// and <see cref="Pin"/>, which check that the owner is still rented. A span taken from that memory after Dispose
    /// throws, naming the pool (a span taken before Dispose is a raw reference and cannot be checked: do not keep one).
    /// </summary>
    /// <remarks>Ordering: as <see cref="PooledMemoryOwner"/>: the exchange of <c>_rented</c> picks the one Dispose that returns the array.
    /// The array field is never cleared, so a racing <see cref="GetSpan"/> either throws or reads a valid array.</remarks>
    private sealed class DiagnosticMemoryOwner(OwnerClass owners, byte[] array) : MemoryManager<byte>
    {
        private int _rented = 1;

        public override Memory<byte> Memory
        {
            get
            {
                if (Volatile.Read(ref _rented) == 0) owners.Pool.ThrowOwnerDisposed();
                return base.Memory;
            }
        }

        public override Span<byte> GetSpan()
        {
            if (Volatile.Read(ref _rented) == 0) owners.Pool.ThrowOwnerDisposed();
            return array;
        }

        public override unsafe MemoryHandle Pin(int elementIndex = 0)
        {
            if (Volatile.Read(ref _rented) == 0) owners.Pool.ThrowOwnerDisposed();
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
            owners.Returns.Increment();
            owners.Pool._manager.Return(array); // after the owned manager's Dispose the manager ignores it: the array is dropped
        }
    }
}
