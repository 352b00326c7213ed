using System.Diagnostics.Metrics;

namespace Manaloc.Diagnostics;

/// <summary>
/// The one <see cref="Meter"/> of each area. Instruments are observable where possible: they read
/// counters the components keep anyway, so an unobserved instrument costs nothing on the hot path.
/// </summary>
/// <remarks>
/// Instrument names are lowercase and dotted (<c>manaloc.pool.rents</c>); tags are low-cardinality
/// (a pool's name, a size class). Watch them with <c>dotnet-counters monitor --counters Manaloc.Pooling</c>
/// or an OpenTelemetry meter provider. Thread safety: meters are safe to use from any thread.
/// </remarks>
public static class ManalocMeters
{
    /// <summary>Meter name of the Memory area.</summary>
    public const string MemoryName = "Manaloc.Memory";
    /// <summary>Meter name of the Pooling and Buffers areas.</summary>
    public const string PoolingName = "Manaloc.Pooling";
    /// <summary>Meter name of the Threading area.</summary>
    public const string ThreadingName = "Manaloc.Threading";

    /// <summary>Instruments of TypeAllocator and NativeSlabAllocator.</summary>
    public static Meter Memory { get; } = new(MemoryName, Version);
    /// <summary>Instruments of the pools and the buffer manager.</summary>
    public static Meter Pooling { get; } = new(PoolingName, Version);
    /// <summary>Instruments of the dispatcher and other threading components.</summary>
    public static Meter Threading { get; } = new(ThreadingName, Version);

    private static string Version => typeof(ManalocMeters).Assembly.GetName().Version?.ToString() ?? "0.0.0";
}
