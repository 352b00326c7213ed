namespace Manaloc.Buffers;

/// <summary>A buffer rented from a <see cref="BufferManager"/> that goes back on <see cref="Dispose"/>: <c>using var b = manager.RentBuffer(4096);</c></summary>
/// <remarks>
/// Why: the return cannot be forgotten on any path, exceptions included. <see cref="Span"/> and
/// <see cref="Memory"/> cover the length asked for; <see cref="Array"/> may be longer. Do not copy the
/// struct and dispose both copies: that is a double return (refused when it reaches the same thread's
/// stack, always caught in debug mode). Thread safety: like an array — no synchronisation; dispose once.
/// </remarks>
public struct RentedBuffer : IDisposable
{
    private BufferManager? _owner;

    internal RentedBuffer(BufferManager owner, byte[] array, int length)
    {
        _owner = owner;
        Array = array;
        Length = length;
    }

    /// <summary>The rented array (null after Dispose; may be longer than <see cref="Length"/>).</summary>
    public byte[] Array { get; private set; }

    /// <summary>The length asked for.</summary>
    public int Length { get; private set; }

    /// <summary>The first <see cref="Length"/> bytes.</summary>
    public readonly Span<byte> Span => new(Array, 0, Length);

    /// <summary>The first <see cref="Length"/> bytes as memory.</summary>
    public readonly Memory<byte> Memory => new(Array, 0, Length);

    /// <summary>Returns the array to its manager; a second call on the same copy does nothing.</summary>
    public void Dispose()
    {
        var owner = _owner;
        if (owner is null) return;
        _owner = null;
        owner.Return(Array);
        Array = null!;
        Length = 0;
    }
}
