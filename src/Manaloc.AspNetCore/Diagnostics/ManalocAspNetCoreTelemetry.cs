namespace Manaloc.AspNetCore.Diagnostics;

/// <summary>The names of the package's meter and instruments, for listeners (OpenTelemetry's <c>AddMeter</c>, <c>dotnet-counters</c>).</summary>
/// <remarks>
/// The meter is created through the host's <see cref="System.Diagnostics.Metrics.IMeterFactory"/> when the container has
/// one (the generic host and <c>WebApplication</c> register it), so it is scoped to that container and disposed with it;
/// without one it is a plain <see cref="System.Diagnostics.Metrics.Meter"/>. Manaloc's own meters
/// (<see cref="Manaloc.Diagnostics.ManalocTelemetry.MeterNames"/>) are process-wide: listen to them by name as well.
/// </remarks>
public static class ManalocAspNetCoreTelemetry
{
    /// <summary>The meter's name: <c>Manaloc.AspNetCore</c>.</summary>
    public const string MeterName = "Manaloc.AspNetCore";

    /// <summary>Counter of requests a hosted dispatcher refused, tagged <c>name</c> (the dispatcher) and <c>reason</c> (<c>over_share</c>, <c>full</c>, <c>stopped</c>).</summary>
    public const string DispatcherRefused = "manaloc.aspnetcore.dispatcher.refused";

    /// <summary>Counter of accepted work items a hosted dispatcher had not run at its drain deadline, tagged <c>name</c>.</summary>
    public const string DispatcherAbandoned = "manaloc.aspnetcore.dispatcher.abandoned";

    /// <summary>Counter of idle releases run (<see cref="ManalocServiceCollectionExtensions.AddManalocIdleRelease"/>): the pools trimmed and, unless turned off, one aggressive collection.</summary>
    public const string IdleReleases = "manaloc.aspnetcore.idle_release.runs";

    /// <summary>Observable up-down counter of the Kestrel memory pools' buffers rented and not yet returned, tagged <c>name</c> (the pool).</summary>
    public const string MemoryPoolOutstanding = "manaloc.aspnetcore.memory_pool.outstanding";

    /// <summary>Observable counter of the Kestrel memory pools' rents, tagged <c>name</c> (the pool).</summary>
    public const string MemoryPoolRents = "manaloc.aspnetcore.memory_pool.rents";
}
