using System.Diagnostics.Metrics;

namespace Manaloc.Diagnostics;

/// <summary>
/// The one <see cref="Meter"/> of each area. Instruments are observable where possible: they read
/// counters the components keep anyway, so an unobserved instrument costs nothing on the hot path.
/// </summary>
/// <remarks>
/// Internal, so no other code can record into or dispose Manaloc's meters; their names are public in
/// <see cref="ManalocTelemetry"/>. Instrument names are lowercase and dotted (<c>manaloc.pool.rents</c>);
/// tags follow <see cref="ManalocTelemetry"/>'s scheme. Thread safety: meters are safe to use from any thread.
/// </remarks>
internal static class ManalocMeters
{
    /// <summary>Meter name of the Memory area.</summary>
    public const string MemoryName = ManalocTelemetry.MemoryMeterName;
    /// <summary>Meter name of the Pooling and Buffers areas.</summary>
    public const string PoolingName = ManalocTelemetry.PoolingMeterName;
    /// <summary>Meter name of the Threading area.</summary>
    public const string ThreadingName = ManalocTelemetry.ThreadingMeterName;

    /// <summary>Instruments of TypeAllocator and NativeSlabAllocator.</summary>
    public static Meter Memory { get; } = new(MemoryName, Version);
    /// <summary>Instruments of the pools and the buffer manager.</summary>
    public static Meter Pooling { get; } = new(PoolingName, Version);
    /// <summary>Instruments of the dispatcher and other threading components.</summary>
    public static Meter Threading { get; } = new(ThreadingName, Version);

    private static string Version => typeof(ManalocMeters).Assembly.GetName().Version?.ToString() ?? "0.0.0";
}
