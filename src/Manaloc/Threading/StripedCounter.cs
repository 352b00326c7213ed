using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>
/// A 64-bit counter that many threads can add to without fighting over one cache line: one padded
/// cell per processor, summed when read (the design of Java's <c>LongAdder</c>).
/// </summary>
/// <remarks>
/// <para>
/// Why: <c>Interlocked.Increment</c> on one shared field serializes every core on that field's
/// cache line; under contention each increment costs a cross-core line transfer. Here a thread adds
/// to the cell of the processor it runs on (<see cref="Thread.GetCurrentProcessorId"/>), so threads
/// on different cores touch different lines, each a <see cref="Padded{T}"/>.
/// </para>
/// <para>
/// Memory ordering: every add is an <see cref="Interlocked.Add(ref long, long)"/> on its cell, because
/// two threads can map to one cell (a thread migrates between reading its processor id and adding,
/// or more threads than cells), so no increment is ever lost. <see cref="Sum"/> reads each cell
/// with <see cref="Volatile.Read(ref readonly long)"/>: it is exact once writers are quiescent
/// (joined, or otherwise ordered before the read), and otherwise a value the counter passed
/// through "recently" — not an atomic snapshot, exactly like <c>LongAdder.sum()</c>.
/// </para>
/// <para>
/// Cost: increments are a few nanoseconds and scale with cores; a read is proportional to the
/// cell count (the processor count rounded up to a power of two), and the counter takes
/// ~264 bytes per cell. Prefer it for counters written far more often than read (statistics).
/// </para>
/// <para>Thread safety: every member is safe to call from any thread.</para>
/// </remarks>
public sealed class StripedCounter
{
    private readonly Padded<long>[] _cells;
    private readonly int _mask;

    /// <summary>Creates a counter with one cell per processor (rounded up to a power of two).</summary>
    public StripedCounter()
        : this(Environment.ProcessorCount)
    {
    }

    /// <summary>Creates a counter with at least <paramref name="cells"/> cells (rounded up to a power of two).</summary>
    /// <param name="cells">How many cells; usually the processor count. At most 4096.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="cells"/> is below 1 or above 4096.</exception>
    public StripedCounter(int cells)
    {
        if (cells is < 1 or > 4096)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(cells), cells, "A striped counter has between 1 and 4096 cells.");
        }
        int count = (int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)cells);
        _cells = new Padded<long>[count];
        _mask = count - 1;
    }

    /// <summary>Number of cells.</summary>
    public int CellCount => _cells.Length;

    /// <summary>Adds one.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Increment() => Add(1);

    /// <summary>Subtracts one.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Decrement() => Add(-1);

    /// <summary>Adds <paramref name="value"/> (which may be negative).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Add(long value)
    {
        // Interlocked: another thread may share this cell (see the remarks); the add must not be lost.
        Interlocked.Add(ref _cells[Thread.GetCurrentProcessorId() & _mask].Value, value);
    }

    /// <summary>The sum of every cell: exact when no add runs concurrently, otherwise approximate.</summary>
    public long Sum()
    {
        long sum = 0;
        var cells = _cells;
        for (int i = 0; i < cells.Length; i++)
        {
            // Volatile: read each cell fresh (no hoisting); pairs with the Interlocked.Add of writers.
            sum += Volatile.Read(ref cells[i].Value);
        }
        return sum;
    }

    /// <summary>Sets every cell to zero and returns the sum they held.</summary>
    /// <remarks>Adds that race with the reset land either in the returned sum or in the new count, never both, never neither.</remarks>
    public long Reset()
    {
        long sum = 0;
        var cells = _cells;
        for (int i = 0; i < cells.Length; i++)
        {
            // Exchange: takes the cell's value atomically, so a concurrent add is counted exactly once.
            sum += Interlocked.Exchange(ref cells[i].Value, 0);
        }
        return sum;
    }

    /// <inheritdoc/>
    public override string ToString() => Sum().ToString(System.Globalization.CultureInfo.InvariantCulture);
}
