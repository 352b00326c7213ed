namespace Manaloc.Pooling;

/// <summary>Ready-made <see cref="PoolPolicy{T}"/> instances.</summary>
/// <remarks>Thread safety: the policies returned are stateless apart from the delegates given, and safe from any thread if those are.</remarks>
public static class PoolPolicies
{
    /// <summary>A policy that creates with <paramref name="create"/> and resets with <paramref name="reset"/> (kept when reset is null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="create"/> is null.</exception>
    public static PoolPolicy<T> Create<T>(Func<T> create, Func<T, bool>? reset = null) where T : class
    {
        ArgumentNullException.ThrowIfNull(create);
        return new DelegatePoolPolicy<T>(create, reset);
    }

    /// <summary>A policy that creates with <c>new T()</c> and keeps every returned object as is.</summary>
    public static PoolPolicy<T> New<T>() where T : class, new() => NewPolicy<T>.Instance;
}
