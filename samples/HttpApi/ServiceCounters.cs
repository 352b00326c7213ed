using System.Diagnostics;
using Manaloc.AspNetCore.Dispatching;

namespace HttpApi;

/// <summary>Requests served, and the snapshot /stats answers.</summary>
public sealed class ServiceCounters
{
    private long _served;

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
            pool?.Rents ?? 0, pool?.Outstanding ?? 0, cpu is { } s ? s.OverShare + s.Unavailable : 0);
    }
}
