namespace Manaloc.Diagnostics;

/// <summary>
/// The names under which Manaloc publishes telemetry: one <see cref="System.Diagnostics.Tracing.EventSource"/>
/// and one <see cref="System.Diagnostics.Metrics.Meter"/> per area. Use them with <c>dotnet-counters</c>,
/// <c>dotnet-trace</c>, an OpenTelemetry meter provider or a <see cref="System.Diagnostics.Metrics.MeterListener"/>.
/// </summary>
/// <remarks>
/// The meters and the event source themselves are internal: only Manaloc records into them. Every
/// per-instance instrument carries the same tags: <see cref="NameTag"/> (the instance's configured
/// name) and <see cref="KindTag"/> (what the instance is); the per-type memory instruments add
/// <see cref="TypeTag"/>. The instruments and their units are listed in the repository's
/// <c>docs/observability.md</c>.
/// </remarks>
public static class ManalocTelemetry
{
    /// <summary>The event source's name: <c>dotnet-trace collect --providers Manaloc</c>.</summary>
    public const string EventSourceName = "Manaloc";

    /// <summary>The meter of native memory: TypeAllocator and NativeSlabAllocator.</summary>
    public const string MemoryMeterName = "Manaloc.Memory";

    /// <summary>The meter of the object pools and buffer managers.</summary>
    public const string PoolingMeterName = "Manaloc.Pooling";

    /// <summary>The meter of the threading components (events, locks, dispatchers).</summary>
    public const string ThreadingMeterName = "Manaloc.Threading";

    /// <summary>Tag: the instance's name, as given in its options.</summary>
    public const string NameTag = "name";

    /// <summary>Tag: the kind of instance (<c>object-pool</c>, <c>buffer-manager</c>, <c>type-allocator</c>, <c>slab-allocator</c>, …).</summary>
    public const string KindTag = "kind";

    /// <summary>Tag of the per-type memory instruments: the record type's name.</summary>
    public const string TypeTag = "type";

    /// <summary>Every meter name, for <c>AddMeter(ManalocTelemetry.MeterNames)</c> (a new array each call).</summary>
    public static string[] MeterNames => [MemoryMeterName, PoolingMeterName, ThreadingMeterName];
}
