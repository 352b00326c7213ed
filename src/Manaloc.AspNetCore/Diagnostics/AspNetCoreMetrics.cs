using System.Diagnostics.Metrics;

namespace Manaloc.AspNetCore.Diagnostics;

/// <summary>
/// The package's instruments on one meter, created through <see cref="IMeterFactory"/> when the container has one.
/// One instance per container (a singleton), so two hosts in one process report separately.
/// </summary>
internal sealed class AspNetCoreMetrics : IDisposable
{
    private readonly Meter _meter;
    private readonly bool _ownsMeter;
    private readonly Counter<long> _refused;
    private readonly Counter<long> _abandoned;
    private readonly Counter<long> _idleReleases;

    public AspNetCoreMetrics(IMeterFactory? factory)
    {
        string version = typeof(AspNetCoreMetrics).Assembly.GetName().Version?.ToString() ?? "0.0.0";
        if (factory is not null)
        {
            _meter = factory.Create(new MeterOptions(ManalocAspNetCoreTelemetry.MeterName) { Version = version });
        }
        else
        {
            _meter = new Meter(ManalocAspNetCoreTelemetry.MeterName, version);
            _ownsMeter = true; // a factory disposes its own meters with the container
        }
        _refused = _meter.CreateCounter<long>(ManalocAspNetCoreTelemetry.DispatcherRefused, "{request}", "Requests a hosted dispatcher refused (over the client's share, queue full, or stopped).");
        _abandoned = _meter.CreateCounter<long>(ManalocAspNetCoreTelemetry.DispatcherAbandoned, "{item}", "Accepted work items not run at the drain deadline.");
        _idleReleases = _meter.CreateCounter<long>(ManalocAspNetCoreTelemetry.IdleReleases, "{release}", "Idle releases run: the pools trimmed and, unless turned off, one aggressive collection.");
    }

    /// <summary>The meter (tests; further instruments).</summary>
    public Meter Meter => _meter;

    /// <summary>Observes the pools <paramref name="factory"/> creates: rents, and buffers outstanding, per pool.</summary>
    public void ObserveMemoryPools(Kestrel.ManalocMemoryPoolFactory factory)
    {
        _meter.CreateObservableCounter(ManalocAspNetCoreTelemetry.MemoryPoolRents,
            () => factory.Pools.Select(p => new Measurement<long>(p.GetStatistics().Rents, new KeyValuePair<string, object?>("name", p.Name))), "{buffer}", "Buffers rented from Kestrel's memory pools.");
        _meter.CreateObservableUpDownCounter(ManalocAspNetCoreTelemetry.MemoryPoolOutstanding,
            () => factory.Pools.Select(p => new Measurement<long>(p.GetStatistics().Outstanding, new KeyValuePair<string, object?>("name", p.Name))), "{buffer}", "Buffers rented from Kestrel's memory pools and not yet returned.");
    }

    public void DispatcherRefused(string name, string reason)
        => _refused.Add(1, new KeyValuePair<string, object?>("name", name), new KeyValuePair<string, object?>("reason", reason));

    public void DispatcherAbandoned(string name, int count)
        => _abandoned.Add(count, new KeyValuePair<string, object?>("name", name));

    public void IdleReleased() => _idleReleases.Add(1);

    public void Dispose()
    {
        if (_ownsMeter) _meter.Dispose();
    }
}
