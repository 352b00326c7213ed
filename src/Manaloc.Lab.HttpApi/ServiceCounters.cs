using System.Diagnostics;
using Manaloc.AspNetCore.Diagnostics;
using Manaloc.AspNetCore.Dispatching;

namespace HttpApi;

/// <summary>Requests served, the bytes Kestrel's own pool keeps idle, the idle releases run, and the snapshot /stats answers.</summary>
public sealed class ServiceCounters : IDisposable
{
    private long _served;
    private long _kestrelPooled;
    private long _idleReleases;
    private readonly System.Diagnostics.Metrics.MeterListener _listener = new();
    private readonly Action<long>? _idleReleased;

    /// <summary>Listens to ASP.NET Core's memory pool meter (.NET 10): the bytes Kestrel's own pool keeps idle, for the defaults build's /stats; and to Manaloc.AspNetCore's idle releases.</summary>
    /// <remarks>The instrument is an up-down counter: its measurements are changes, summed here (Interlocked: they arrive on any thread).</remarks>
    /// <param name="idleReleased">Told the releases run so far after each idle release (on the release's thread), or null.</param>
    public ServiceCounters(Action<long>? idleReleased = null)
    {
        _idleReleased = idleReleased;
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if ((instrument.Meter.Name == "Microsoft.AspNetCore.MemoryPool" && instrument.Name == "aspnetcore.memory_pool.pooled")
                || (instrument.Meter.Name == ManalocAspNetCoreTelemetry.MeterName && instrument.Name == ManalocAspNetCoreTelemetry.IdleReleases))
                listener.EnableMeasurementEvents(instrument, this);
        };
        _listener.SetMeasurementEventCallback<long>(static (instrument, change, _, state) =>
        {
            var counters = (ServiceCounters)state!;
            if (instrument.Name == ManalocAspNetCoreTelemetry.IdleReleases) counters._idleReleased?.Invoke(Interlocked.Add(ref counters._idleReleases, change));
            else Interlocked.Add(ref counters._kestrelPooled, change);
        });
        _listener.Start();
    }

    public void Dispose() => _listener.Dispose();

    public long Served => Interlocked.Read(ref _served);

    /// <summary>Counts a request (statistics: the increment orders nothing).</summary>
    public void CountRequest() => Interlocked.Increment(ref _served);

    public ServiceStats Snapshot(string build, IServiceProvider services)
    {
        using var process = Process.GetCurrentProcess();
        var pool = services.GetService<Manaloc.AspNetCore.Kestrel.ManalocMemoryPoolFactory>()?.GetStatistics();
        var cpu = services.GetKeyedService<HostedDispatcher>(ManalocBuild.DispatcherName)?.GetStatistics();
        return new ServiceStats(build, GC.GetTotalAllocatedBytes(precise: true), GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2),
            GC.GetTotalPauseDuration().TotalMilliseconds, process.WorkingSet64, process.PeakWorkingSet64, Served,
            pool?.Rents ?? 0, pool?.Outstanding ?? 0, cpu is { } s ? s.OverShare + s.Unavailable : 0,
            pool?.RetainedBytes ?? Interlocked.Read(ref _kestrelPooled), GC.GetGCMemoryInfo(GCKind.Any).TotalCommittedBytes, Interlocked.Read(ref _idleReleases));
    }
}
