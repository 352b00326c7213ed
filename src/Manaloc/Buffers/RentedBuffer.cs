using Manaloc.Pooling;

namespace Manaloc.Buffers;

/// <summary>A buffer rented from a <see cref="BufferManager"/> that goes back on <see cref="Dispose"/>: <c>using var b = manager.RentBuffer(4096);</c></summary>
/// <remarks>
/// <para>Why: the return cannot be forgotten on any path, exceptions included. <see cref="Span"/> and
/// <see cref="Memory"/> cover the length asked for; <see cref="Array"/> may be longer.</para>
/// <para>Copies are safe: a rented buffer is an immutable handle to a lease, and the first
/// <see cref="Dispose"/> of any copy ends the lease (a compare-and-swap of its generation); every later
/// Dispose, of this copy or another, does nothing, and the buffer goes back exactly once. After the
/// lease ends, <see cref="Array"/>, <see cref="Span"/> and <see cref="Memory"/> throw
/// <see cref="ObjectDisposedException"/> on every copy (a <see cref="Memory"/> or array taken before
/// Dispose is not tracked: do not keep it); the exception names the manager. Leases are pooled: renting
/// allocates nothing after warm-up.</para>
/// <para>Leaks: in the manager's debug mode, a rented buffer that the GC finds unreachable before any copy
/// was disposed is reported with the stack where it was rented (the BufferLeak event and
/// <see cref="BufferManagerOptions.LeakReported"/>); without debug mode its array is simply collected.</para>
/// <para>Thread safety: Dispose is safe from any thread, once or many times, on any copy; the bytes,
/// like an array's, have no synchronisation.</para>
/// </remarks>
public readonly struct RentedBuffer : IDisposable
{
    private readonly BufferManager? _owner;
    private readonly byte[]? _array;
    private readonly BufferLease? _lease;
    private readonly int _generation;

    internal RentedBuffer(BufferManager owner, byte[] array, int length, BufferLeakTracker? tracker)
    {
        _owner = owner;
        _array = array;
        Length = length;
        _lease = BufferLease.Rent();
        _lease.Tracker = tracker; // null outside debug mode; the lease is this rent's alone until Dispose
        _generation = Volatile.Read(ref _lease.Generation);
    }

    /// <summary>The rented array (may be longer than <see cref="Length"/>).</summary>
    /// <exception cref="ObjectDisposedException">This buffer (or a copy of it) was disposed.</exception>
    public byte[] Array
    {
        get
        {
            if (IsDisposed) ThrowHelper.ThrowBufferDisposed(_owner?.Name, Length);
            return _array!;
        }
    }

    /// <summary>The length asked for.</summary>
    public int Length { get; }

    /// <summary>True once this buffer or any copy of it was disposed (and for <c>default</c>).</summary>
    public bool IsDisposed => _lease is null || Volatile.Read(ref _lease.Generation) != _generation;

    /// <summary>The first <see cref="Length"/> bytes.</summary>
    /// <exception cref="ObjectDisposedException">This buffer (or a copy of it) was disposed.</exception>
    public Span<byte> Span => new(Array, 0, Length);

    /// <summary>The first <see cref="Length"/> bytes as memory.</summary>
    /// <exception cref="ObjectDisposedException">This buffer (or a copy of it) was disposed.</exception>
    public Memory<byte> Memory => new(Array, 0, Length);

    /// <summary>Returns the array to its manager, the first time any copy is disposed; later calls do nothing.</summary>
    public void Dispose()
    {
        var lease = _lease;
        if (lease is null) return;
        // The CAS ends the lease once: one copy wins, the others (and repeats) see a new generation.
        if (Interlocked.CompareExchange(ref lease.Generation, unchecked(_generation + 1), _generation) != _generation) return;
        var tracker = lease.Tracker;
        if (tracker is not null)
        {
            lease.Tracker = null; // the CAS above made this copy the lease's only writer
            GC.SuppressFinalize(tracker); // returned: no leak to report
        }
        _owner!.Return(_array!);
        BufferLease.Return(lease);
    }
}

/// <summary>
/// The mutable half of a <see cref="RentedBuffer"/>: a generation that its first Dispose advances.
/// Pooled (one semi-local pool for the process); a stale copy of an earlier lease sees a newer
/// generation and does nothing (a copy kept across 2^32 reuses of one lease could collide: not a
/// realistic program).
/// </summary>
internal sealed class BufferLease
{
    public int Generation;

    /// <summary>Debug mode: reports the rent if the lease is collected before its Dispose (only the lease references it).</summary>
    public BufferLeakTracker? Tracker;

    private static readonly PoolTier<BufferLease> s_pool = new(
        PoolPolicies.Create(static () => new BufferLease()),
        new PoolOptions { Name = "buffers.leases", TrimAfterGen2 = true });

    public static BufferLease Rent() => s_pool.Rent();

    public static void Return(BufferLease lease) => s_pool.Return(lease);
}

/// <summary>
/// Debug mode: one rented buffer's leak report, finalized when its lease becomes unreachable before the
/// buffer was disposed (Dispose suppresses the finalizer). Only the lease references it, so the GC finds
/// both unreachable together, once every copy of the <see cref="RentedBuffer"/> is gone.
/// </summary>
/// <remarks>Runs on the finalizer thread: it raises the event and calls the callback, and swallows what the callback throws.</remarks>
internal sealed class BufferLeakTracker(string manager, int length, string rentedAt, Action<RentedBufferLeak>? reported)
{
    ~BufferLeakTracker()
    {
        var leak = new RentedBufferLeak { ManagerName = manager, Length = length, RentedAt = rentedAt };
        Diagnostics.ManalocEventSource.Log.BufferLeak(manager, length, rentedAt);
        try
        {
            reported?.Invoke(leak);
        }
        catch (Exception) // a user callback on the finalizer thread must not take the process down
        {
        }
    }
}
