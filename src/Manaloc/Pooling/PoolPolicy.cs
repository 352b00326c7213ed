namespace Manaloc.Pooling;

/// <summary>How a pool creates its objects and makes a returned one ready for reuse.</summary>
/// <typeparam name="T">The pooled type.</typeparam>
/// <remarks>
/// Why: the pool owns no knowledge of the type; the policy does. <see cref="Create"/> may throw: the
/// exception reaches the renter and the pool stays consistent. <see cref="Return"/> runs on the
/// returning thread before the object is stored; answer <see langword="false"/> to have it dropped.
/// Thread safety: a policy is called from many threads at once and must be safe for that
/// (stateless policies are).
/// </remarks>
public abstract class PoolPolicy<T> where T : class
{
    /// <summary>Creates a new object.</summary>
    public abstract T Create();

    /// <summary>Resets <paramref name="item"/> for reuse; false drops it instead.</summary>
    public virtual bool Return(T item) => true;

    /// <summary>False when <see cref="Return"/> is known to keep every object untouched, so pools skip the call.</summary>
    internal virtual bool ResetsObjects => true;
}
