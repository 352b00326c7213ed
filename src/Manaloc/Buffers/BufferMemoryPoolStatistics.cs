namespace Manaloc.Buffers;

/// <summary>A snapshot of a <see cref="BufferMemoryPool"/>'s counters.</summary>
/// <remarks>Approximate while threads are busy: the counters are read one after another without stopping them.</remarks>
public readonly record struct BufferMemoryPoolStatistics
{
    /// <summary>Owners handed out since the pool was created.</summary>
    public long Rents { get; internal init; }

    /// <summary>Owners disposed (each counted once, however often it was disposed).</summary>
    public long Returns { get; internal init; }

    /// <summary>Owners rented and not yet disposed: <see cref="Rents"/> minus <see cref="Returns"/> (never negative).</summary>
    public long Outstanding => Math.Max(0, Rents - Returns);

    /// <summary>Bytes of the arrays those outstanding owners hold (each array's full length).</summary>
    public long RentedBytes { get; internal init; }

    /// <summary>Bytes of idle arrays the underlying manager keeps for reuse (every user of that manager, when shared).</summary>
    public long RetainedBytes { get; internal init; }

    /// <summary>Adds two snapshots field by field (to total several pools).</summary>
    public static BufferMemoryPoolStatistics operator +(BufferMemoryPoolStatistics left, BufferMemoryPoolStatistics right) => new()
    {
        Rents = left.Rents + right.Rents, Returns = left.Returns + right.Returns,
        RentedBytes = left.RentedBytes + right.RentedBytes, RetainedBytes = left.RetainedBytes + right.RetainedBytes,
    };

    /// <summary>Same as the + operator.</summary>
    public static BufferMemoryPoolStatistics Add(BufferMemoryPoolStatistics left, BufferMemoryPoolStatistics right) => left + right;
}
