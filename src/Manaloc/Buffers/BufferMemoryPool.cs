using System.Buffers;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Manaloc.Buffers;

/// <summary>
/// A <see cref="MemoryPool{T}"/> of bytes over a <see cref="BufferManager"/>: what System.IO.Pipelines
/// (<c>new PipeOptions(pool: ...)</c>), Kestrel and other socket code take.
/// </summary>
/// <remarks>
/// <para>Why: <see cref="MemoryPool{T}.Shared"/> allocates an owner object per rent and rents from
/// <see cref="ArrayPool{T}.Shared"/>; here the arrays come from a buffer manager (bounded retention, statistics) and
/// the owners are pooled per size class, each keeping its array, so after warm-up a rent and its Dispose allocate
/// nothing and cost one pool operation each (a pipe rents on one thread and disposes on another: the class's thread
/// stacks and shared tier carry owners across in batches).</para>
/// <para>Contract: <c>Rent()</c> and <c>Rent(-1)</c> return <see cref="BufferMemoryPoolOptions.BlockSize"/> bytes;
/// <c>Rent(n)</c> returns at least n bytes (the whole array: n rounded up to a power of two, at least 16; <c>Rent(0)</c>
/// returns empty memory, as <see cref="MemoryPool{T}.Shared"/> does, from one shared owner that holds nothing and is not
/// counted); below -1 or above <see cref="MaxBufferSize"/> throws
/// <see cref="ArgumentOutOfRangeException"/>. Disposing an owner gives its array back; disposing it again does nothing,
/// also when two threads dispose it at once. After the pool's Dispose, Rent throws <see cref="ObjectDisposedException"/>
/// and owners still out may be disposed as usual (they are dropped with their arrays). Idle owners go, with their arrays,
/// on the manager's schedule: its idle period and clock, and after gen-2 collections when it trims then.</para>
/// <para>A pooled owner is reused by later rents, so an owner reference kept past its Dispose refers to whatever rent
/// holds that owner next: its <see cref="IMemoryOwner{T}.Memory"/> throws <see cref="ObjectDisposedException"/> only
/// until then, and a second Dispose through it after a new rent would return the new renter's array (no pooled object can
/// tell a stale reference from the current one: the two are the same reference). Code that may do either is a bug the
/// diagnostic mode (<see cref="BufferMemoryPoolOptions.Diagnostics"/>) catches: there every rent gets its own owner.</para>
/// <para>Thread safety: every member is safe from any thread; an owner may be disposed on a thread other than the
/// renter's. The bytes, like an array's, have no synchronisation.</para>
/// </remarks>
public sealed partial class BufferMemoryPool : MemoryPool<byte>
{
    private readonly BufferManager _manager;
    private readonly bool _ownsManager;
    private readonly int _blockSize;
    private readonly int _maxBufferSize;
    private readonly bool _diagnostics;
    // Per power-of-two size class (the manager's index), created on the class's first rent: its idle owners and counters.
    private readonly OwnerClass?[] _classes;
    private readonly Lock _classesLock = new();
    private int _disposed;

    /// <summary>Creates a pool with <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentException">The name is empty, or <see cref="BufferMemoryPoolOptions.Pinned"/> is combined with <see cref="BufferMemoryPoolOptions.Manager"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A size is out of range (see <see cref="BufferMemoryPoolOptions"/>).</exception>
    public BufferMemoryPool(BufferMemoryPoolOptions? options = null)
    {
        options ??= new BufferMemoryPoolOptions();
        if (string.IsNullOrEmpty(options.Name)) ThrowHelper.ThrowArgument(nameof(options.Name), "A memory pool needs a non-empty name.");
        Name = options.Name;
        var manager = options.Manager;
        if (manager is not null && options.Pinned)
            ThrowHelper.ThrowArgument(nameof(options.Pinned), $"BufferMemoryPool '{Name}': Pinned applies to the manager the pool creates; it cannot be combined with a given Manager.");
        int managerMax = manager?.MaxBufferSize ?? new BufferManagerOptions().MaxBufferSize;
        int max = options.MaxBufferSize == 0 ? managerMax : options.MaxBufferSize;
        if (!IsPowerOfTwoBetween(max, 16, manager is null ? 1 << 30 : managerMax))
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options.MaxBufferSize), options.MaxBufferSize,
                $"BufferMemoryPool '{Name}': MaxBufferSize must be 0 (the manager's) or a power of two from 16 to {(manager is null ? 1 << 30 : managerMax):N0}.");
        if (!IsPowerOfTwoBetween(options.BlockSize, 16, max))
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options.BlockSize), options.BlockSize,
                $"BufferMemoryPool '{Name}': BlockSize must be a power of two from 16 to MaxBufferSize ({max:N0}).");
        _blockSize = options.BlockSize;
        _maxBufferSize = max;
        _diagnostics = options.Diagnostics;
        _ownsManager = manager is null;
        _manager = manager ?? new BufferManager(new BufferManagerOptions { Name = Name, MaxBufferSize = max, PinnedArrays = options.Pinned, PoisonReturnedBuffers = options.Diagnostics });
        _classes = new OwnerClass?[BufferManager.SelectClass(max) + 1];
    }

    private static bool IsPowerOfTwoBetween(int value, int min, int max) => value >= min && value <= max && BitOperations.IsPow2(value);

    /// <summary>The pool's name (named by its exceptions).</summary>
    public string Name { get; }

    /// <summary>The largest rent served: <see cref="BufferMemoryPoolOptions.MaxBufferSize"/>, or the manager's maximum.</summary>
    public override int MaxBufferSize => _maxBufferSize;

    /// <summary>The buffer manager the arrays come from.</summary>
    public BufferManager Manager => _manager;

    /// <summary>Rents memory of at least <paramref name="minimumBufferSize"/> bytes; -1 (the default) rents <see cref="BufferMemoryPoolOptions.BlockSize"/> bytes.</summary>
    /// <returns>An owner whose Dispose gives the array back. Its memory covers the whole array, which may be longer than asked for.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="minimumBufferSize"/> is below -1 or above <see cref="MaxBufferSize"/>.</exception>
    /// <exception cref="ObjectDisposedException">The pool was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public override IMemoryOwner<byte> Rent(int minimumBufferSize = -1)
    {
        if (minimumBufferSize == -1) minimumBufferSize = _blockSize;
        else if ((uint)minimumBufferSize > (uint)_maxBufferSize) ThrowRentOutOfRange(minimumBufferSize);
        // Checked before an owner is taken, so a rent that throws holds nothing; a Dispose racing this rent may let it
        // through (the class's tier then throws ObjectDisposedException, or the rent is served as usual: harmless).
        if (Volatile.Read(ref _disposed) != 0) ThrowHelper.ThrowPoolDisposed(nameof(BufferMemoryPool), Name);
        if (minimumBufferSize == 0) return EmptyMemoryOwner.Instance;
        var owners = Volatile.Read(ref _classes[BufferManager.SelectClass(minimumBufferSize)]) ?? CreateClass(minimumBufferSize);
        return _diagnostics ? RentDiagnostic(owners) : PooledMemoryOwner.Rent(owners);
    }

    private DiagnosticMemoryOwner RentDiagnostic(OwnerClass owners)
    {
        var owner = new DiagnosticMemoryOwner(owners, _manager.Rent(owners.Size));
        owners.Rents.Increment();
        return owner;
    }

    /// <summary>The size class that serves <paramref name="minimumBufferSize"/>, created on its first rent.</summary>
    /// <remarks>Under the lock, so a class is created once (its tier holds a timer and a thread slot) and never after the pool's
    /// Dispose; published by the lock's release, and read with an acquire load on the fast path.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private OwnerClass CreateClass(int minimumBufferSize)
    {
        int index = BufferManager.SelectClass(minimumBufferSize);
        lock (_classesLock)
        {
            if (_disposed != 0) ThrowHelper.ThrowPoolDisposed(nameof(BufferMemoryPool), Name);
            return _classes[index] ??= new OwnerClass(this, 16 << index);
        }
    }

    /// <summary>The pool's counters, the bytes its manager retains and the bytes its idle owners hold.</summary>
    /// <remarks>Approximate while threads are busy (counters read one after another). Thread safety: safe from any thread.</remarks>
    public BufferMemoryPoolStatistics GetStatistics()
    {
        long rents = 0, returns = 0, rentedBytes = 0, idleBytes = 0;
        for (int i = 0; i < _classes.Length; i++)
        {
            var owners = Volatile.Read(ref _classes[i]); // acquire: pairs with the lock that published it
            if (owners is null) continue;
            long classReturns = owners.Returns.Sum(); // returns before rents: a rent counted before its return keeps Rents ≥ Returns in a racy read
            long classRents = owners.Rents.Sum();
            returns += classReturns;
            rents += classRents;
            rentedBytes += Math.Max(0, classRents - classReturns) * owners.Size;
            idleBytes += owners.Owners.GetStatistics().Retained * owners.Size;
        }
        long retained = Volatile.Read(ref _disposed) == 0 || !_ownsManager ? _manager.GetStatistics().RetainedBytes : 0;
        return new BufferMemoryPoolStatistics
        {
            Rents = rents, Returns = returns, RentedBytes = rentedBytes, RetainedBytes = retained + idleBytes,
        };
    }

    /// <summary>The pool's name, and <c>(disposed)</c> once disposed: <c>BufferMemoryPool 'memory-pool'</c>.</summary>
    public override string ToString() => Volatile.Read(ref _disposed) != 0 ? $"{nameof(BufferMemoryPool)} '{Name}' (disposed)" : $"{nameof(BufferMemoryPool)} '{Name}'";

    /// <summary>Stops renting; disposes the manager when the pool created it. Idempotent.</summary>
    protected override void Dispose(bool disposing)
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        lock (_classesLock)
        {
            foreach (var owners in _classes) owners?.Owners.Dispose(); // idle owners are dropped with their arrays; owners still out are dropped when disposed
        }
        if (_ownsManager) _manager.Dispose();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowRentOutOfRange(int minimumBufferSize)
        => ThrowHelper.ThrowArgumentOutOfRange(nameof(minimumBufferSize), minimumBufferSize,
            $"BufferMemoryPool '{Name}' rents from 0 to MaxBufferSize ({_maxBufferSize:N0}) bytes, or -1 for its block size ({_blockSize:N0}).");

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void ThrowOwnerDisposed()
        => throw new ObjectDisposedException(nameof(BufferMemoryPool),
            $"This memory from BufferMemoryPool '{Name}' was disposed: its array went back to the pool and may be another renter's now.");
}
