using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Threading;

/// <summary>Telemetry: how often waits had to block, over every event in the process.</summary>
public sealed partial class EconomicResetEvent
{
    // Observable: reads the counter the slow path keeps anyway; the fast paths pay nothing. Process-wide: an event has
    // no name, and tracking every live event for a per-instance tag would cost each one, so only the kind tag is set.
    private static readonly ObservableCounter<long> s_blockedWaitsInstrument = ManalocMeters.Threading.CreateObservableCounter(
        "manaloc.reset_event.blocked_waits",
        () => new Measurement<long>(BlockedWaits, new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "reset-event")),
        unit: "{wait}",
        description: "Waits on an EconomicResetEvent that found it unset after spinning and blocked.");
}
