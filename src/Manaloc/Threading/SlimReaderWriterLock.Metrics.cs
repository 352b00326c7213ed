using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Threading;

/// <summary>Telemetry: how often contended threads had to sleep, over every lock in the process.</summary>
public sealed partial class SlimReaderWriterLock
{
    private static long s_sleeps;

    // Observable: reads the counter the sleeping path keeps anyway; the fast paths pay nothing. Process-wide: a lock has
    // no name, and tracking every live lock for a per-instance tag would cost each one, so only the kind tag is set.
    private static readonly ObservableCounter<long> s_sleepsInstrument = ManalocMeters.Threading.CreateObservableCounter(
        "manaloc.rwlock.sleeps",
        () => new Measurement<long>(Sleeps, new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "rwlock")),
        unit: "{sleep}",
        description: "Times a thread contending for a SlimReaderWriterLock stopped spinning and slept.");

    /// <summary>Sleeps over all locks in the process (metrics and tests).</summary>
    internal static long Sleeps => Interlocked.Read(ref s_sleeps); // statistics: orders nothing
}
