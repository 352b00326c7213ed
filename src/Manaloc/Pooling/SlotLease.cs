namespace Manaloc.Pooling;

/// <summary>A pool's slot id and token; releasing it (once) returns the id to <see cref="ThreadSlots"/>.</summary>
/// <remarks>Thread safety: <see cref="Release"/> is idempotent and safe from any thread (Dispose and the gen-2 callback may race).</remarks>
internal sealed class SlotLease(int id, long token)
{
    private int _released;

    public int Id { get; } = id;
    public long Token { get; } = token;

    /// <summary>True once the id has been given back (tests and diagnostics).</summary>
    public bool IsReleased => Volatile.Read(ref _released) != 0; // snapshot

    public void Release()
    {
        if (Interlocked.Exchange(ref _released, 1) == 0) // the first caller frees the id, later ones do nothing
        {
            ThreadSlots.Free(Id);
        }
    }
}
