using Microsoft.Extensions.ObjectPool;

namespace Manaloc.AspNetCore.ObjectPools;

/// <summary>
/// An <see cref="ObjectPoolProvider"/> whose pools are Manaloc's <see cref="Pooling.SemiLocalPool{T}"/>
/// behind <see cref="ObjectPool{T}"/>: a stack per thread over a shared tier, instead of
/// <see cref="DefaultObjectPool{T}"/>'s one interlocked slot plus a shared array.
/// </summary>
/// <remarks>
/// <para>Why: ASP.NET Core and its libraries pool through <see cref="ObjectPoolProvider"/>; replacing the
/// provider moves all of them onto per-thread pools with a global cap, trimming after gen-2 collections,
/// Manaloc's pool meters and a double-return check, with no change to the code that pools.</para>
/// <para>What it keeps of Microsoft.Extensions.ObjectPool: the policy creates objects and decides on each
/// return (<see cref="IPooledObjectPolicy{T}.Return"/> returning false drops the object;
/// <see cref="DefaultPooledObjectPolicy{T}"/> calls <see cref="IResettable.TryReset"/>); a dropped
/// disposable object is disposed; disposing the pool disposes the idle disposable objects; after disposal
/// <see cref="ObjectPool{T}.Get"/> throws <see cref="ObjectDisposedException"/> and
/// <see cref="ObjectPool{T}.Return"/> disposes the object it is given. What differs: every pool it creates
/// is <see cref="IDisposable"/> (dispose it to give its per-thread slot back at once; otherwise the GC
/// does), and a second return of an object that is still on the returning thread's stack throws
/// <see cref="InvalidOperationException"/> rather than hand it to two callers later.</para>
/// <para>Thread safety: <see cref="Create{T}(IPooledObjectPolicy{T})"/> and the pools it returns are
/// safe from any thread.</para>
/// </remarks>
public sealed class ManalocObjectPoolProvider : ObjectPoolProvider
{
    private readonly ManalocObjectPoolOptions _options;

    /// <summary>Creates a provider with the default options.</summary>
    public ManalocObjectPoolProvider()
        : this(new ManalocObjectPoolOptions())
    {
    }

    /// <summary>Creates a provider whose pools are sized by <paramref name="options"/> (copied now).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException">A value is out of range; the message names it.</exception>
    public ManalocObjectPoolProvider(ManalocObjectPoolOptions options)
    {
        ManalocOptionsBinding.ThrowIfInvalid(options, ManalocObjectPoolOptions.SectionName, static (o, section) => o.Problems(section));
        _options = new ManalocObjectPoolOptions
        {
            MaximumRetained = options.MaximumRetained,
            LocalCapacity = options.LocalCapacity,
            BatchSize = options.BatchSize,
            TrimAfterGen2 = options.TrimAfterGen2,
        };
    }

    /// <inheritdoc/>
    /// <remarks>The pool is named after <typeparamref name="T"/> in Manaloc's meters (tag <c>name</c>). It is <see cref="IDisposable"/>.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    public override ObjectPool<T> Create<T>(IPooledObjectPolicy<T> policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        return new SemiLocalObjectPool<T>(policy, _options.ToPoolOptions(typeof(T)));
    }
}
