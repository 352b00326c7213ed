namespace Manaloc.Buffers;

/// <summary>A snapshot of a <see cref="BufferMemoryPool"/>'s counters.</summary>
/// <param name="Rents">Owners handed out since the pool was created.</param>
/// <param name="Returns">Owners disposed (each counted once, however often it was disposed).</param>
/// <param name="Outstanding">Owners rented and not yet disposed: <paramref name="Rents"/> minus <paramref name="Returns"/>.</param>
/// <param name="RentedBytes">Bytes of the arrays those outstanding owners hold (each array's full length).</param>
/// <param name="RetainedBytes">Bytes of idle arrays the underlying manager keeps for reuse (every user of that manager, when shared).</param>
/// <remarks>Approximate while threads are busy: the counters are read one after another without stopping them.</remarks>
public readonly record struct BufferMemoryPoolStatistics(long Rents, long Returns, long Outstanding, long RentedBytes, long RetainedBytes);
