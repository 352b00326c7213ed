namespace CacheService;

/// <summary>Where HybridCache keeps its second tier: the one switch of the service (<c>CacheService:Tier</c>).</summary>
public enum CacheTier
{
    /// <summary>In this process, off the GC heap: Manaloc's <c>NativeCache</c> under a byte budget (<c>Manaloc:Cache</c>).</summary>
    Manaloc,

    /// <summary>A Garnet (or any Redis-compatible) server shared by every instance of the service (<c>CacheService:Garnet</c>).</summary>
    Garnet,
}
