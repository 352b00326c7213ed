namespace Manaloc.Pooling;

/// <summary>What a thread keeps in its slot for one pool: the base of a pool's per-thread stack.</summary>
/// <remarks>
/// <see cref="Token"/> is the owning pool's unique token: slot ids are reused after a pool is disposed
/// or collected, so a lookup checks the token before trusting the entry's type. Written once, before
/// the entry is published into the thread's own slot array.
/// </remarks>
internal class ThreadSlotEntry(long token)
{
    public readonly long Token = token;
}
