using System.Buffers;
using Manaloc.Collections;
using Microsoft.Extensions.Caching.Distributed;

namespace Manaloc.Caching;

/// <summary>
/// A <see cref="NativeCache"/> behind <see cref="IDistributedCache"/> and <see cref="IBufferDistributedCache"/>: the
/// second tier of <c>HybridCache</c>, or any caller of the distributed-cache abstractions, kept in this process's native
/// memory under the cache's byte budget instead of on the GC heap or behind a network hop.
/// </summary>
/// <remarks>
/// <para>Keys are stored as their UTF-8 bytes (no string is kept); every string is a key, as in
/// <c>MemoryDistributedCache</c>: one with a lone surrogate is stored as its generalized UTF-8 (WTF-8) bytes, which
/// no other string shares. Values are copied in and out. Expiration options map
/// one to one, on the cache's <see cref="NativeCacheOptions.TimeProvider"/>: <see cref="DistributedCacheEntryOptions.AbsoluteExpiration"/>,
/// <see cref="DistributedCacheEntryOptions.AbsoluteExpirationRelativeToNow"/> and <see cref="DistributedCacheEntryOptions.SlidingExpiration"/>
/// (which every read and <see cref="Refresh"/> restart); an entry expires at the earliest of those set. An absolute time
/// already past stores nothing and removes an older value under the key (the entry has expired).</para>
/// <para>A value the cache refuses (its entry is larger than <see cref="NativeCacheOptions.MaxEntryBytes"/>) is not
/// stored and an older value under that key is removed, so a read misses rather than answering stale data, as
/// <c>MemoryDistributedCache</c> does with an entry larger than its size limit. The refusal is counted in
/// <see cref="NativeCache.GetStatistics"/> and the <c>manaloc.cache.refusals</c> meter. A cache may always miss: callers such as <c>HybridCache</c> then run their factory.</para>
/// <para>The asynchronous methods complete synchronously (there is no I/O); a token already cancelled gives a cancelled
/// task and leaves the cache unchanged.</para>
/// <para>Thread safety: every member may be called from any number of threads at once, as <see cref="NativeCache"/>'s.
/// The adapter does not own the cache: whoever created the cache disposes it (the container, for the cache
/// <see cref="ManalocCachingServiceCollectionExtensions.AddManalocDistributedCache"/> makes); a call after that throws
/// <see cref="ObjectDisposedException"/>.</para>
/// </remarks>
public sealed class ManalocDistributedCache : IBufferDistributedCache
{
    // RS0026 (two overloads with optional parameters): the SetAsync overloads implement IDistributedCache's and
    // IBufferDistributedCache's signatures as declared, defaults included; their value parameters' types (byte[] and
    // ReadOnlySequence<byte>) differ, so no call binds to both.
#pragma warning disable RS0026
    /// <summary>A value larger than this is copied out through a writer of its own, so no thread keeps a large array alive.</summary>
    private const int RetainedWriterBytes = 64 * 1024;

    /// <summary>
    /// Each thread's writer for <see cref="Get"/>: the value is copied once into it, then once into the exact-size array
    /// returned. Thread-static, so concurrent readers never share it; reset before each use.
    /// </summary>
    [ThreadStatic]
    private static ArrayBufferWriter<byte>? t_writer;

    /// <summary>Wraps <paramref name="cache"/>; the adapter does not dispose it.</summary>
    /// <param name="cache">The cache that holds the entries.</param>
    /// <exception cref="ArgumentNullException"><paramref name="cache"/> is null.</exception>
    public ManalocDistributedCache(NativeCache cache)
    {
        ArgumentNullException.ThrowIfNull(cache);
        Cache = cache;
    }

    /// <summary>The cache that holds the entries (its statistics, its <see cref="NativeCache.Clear"/>).</summary>
    public NativeCache Cache { get; }

    /// <inheritdoc/>
    public byte[]? Get(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        var writer = t_writer ??= new ArrayBufferWriter<byte>();
        writer.ResetWrittenCount();
        bool hit = Cache.TryGet(key.AsSpan(), writer);
        byte[]? value = hit ? writer.WrittenSpan.ToArray() : null;
        if (writer.Capacity > RetainedWriterBytes) t_writer = null; // one large value does not pin its buffer to the thread
        return value;
    }

    /// <inheritdoc/>
    public Task<byte[]?> GetAsync(string key, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        return token.IsCancellationRequested ? Task.FromCanceled<byte[]?>(token) : Task.FromResult(Get(key));
    }

    /// <inheritdoc/>
    public bool TryGet(string key, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(destination);
        return Cache.TryGet(key.AsSpan(), destination);
    }

    /// <inheritdoc/>
    public ValueTask<bool> TryGetAsync(string key, IBufferWriter<byte> destination, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(destination);
        return token.IsCancellationRequested ? ValueTask.FromCanceled<bool>(token) : new ValueTask<bool>(Cache.TryGet(key.AsSpan(), destination));
    }

    /// <inheritdoc/>
    public void Set(string key, byte[] value, DistributedCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(value);
        ArgumentNullException.ThrowIfNull(options);
        Cache.Set(key.AsSpan(), value, ToEntryOptions(options));
    }

    /// <inheritdoc/>
    public Task SetAsync(string key, byte[] value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(value);
        ArgumentNullException.ThrowIfNull(options);
        if (token.IsCancellationRequested) return Task.FromCanceled(token);
        Cache.Set(key.AsSpan(), value, ToEntryOptions(options));
        return Task.CompletedTask;
    }

    /// <inheritdoc/>
    public void Set(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(options);
        Cache.Set(key.AsSpan(), in value, ToEntryOptions(options));
    }

    /// <inheritdoc/>
    public ValueTask SetAsync(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(options);
        if (token.IsCancellationRequested) return ValueTask.FromCanceled(token);
        Cache.Set(key.AsSpan(), in value, ToEntryOptions(options));
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public void Refresh(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        Cache.Refresh(key.AsSpan());
    }

    /// <inheritdoc/>
    public Task RefreshAsync(string key, CancellationToken token = default) => Synchronously(key, token, static (cache, k) => cache.Refresh(k));

    /// <inheritdoc/>
    public void Remove(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        Cache.Remove(key.AsSpan());
    }

    /// <inheritdoc/>
    public Task RemoveAsync(string key, CancellationToken token = default) => Synchronously(key, token, static (cache, k) => cache.Remove(k));

    /// <summary>An async twin of a key-only operation: cancelled before it runs, or run now and complete (static delegates: no allocation).</summary>
    private Task Synchronously(string key, CancellationToken token, Action<ManalocDistributedCache, string> operation)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (token.IsCancellationRequested) return Task.FromCanceled(token);
        operation(this, key);
        return Task.CompletedTask;
    }

    /// <summary>
    /// The cache's expiration for <paramref name="options"/>: the same three settings, passed through. The cache expires
    /// an entry at the earliest of its absolute time, its time to live and its sliding window, and refuses one whose
    /// absolute time has passed already (nothing stored, an older value under the key removed).
    /// </summary>
    private static NativeCacheEntryOptions ToEntryOptions(DistributedCacheEntryOptions options) => new()
    {
        AbsoluteExpiration = options.AbsoluteExpiration,
        TimeToLive = options.AbsoluteExpirationRelativeToNow,
        SlidingExpiration = options.SlidingExpiration,
    };
#pragma warning restore RS0026
}
