using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.Text;

namespace HttpApi;

/// <summary>
/// Which types the process allocates, sampled by the runtime's allocation tick (one event per ~100 KB allocated,
/// naming the type whose allocation crossed the mark): each type's share of the samples is its share of the bytes.
/// </summary>
/// <remarks>
/// A diagnostic (<c>--allocation-profile PATH</c>, or the environment variable <c>HTTPAPI_ALLOCATION_PROFILE</c>
/// for the lab's child processes): it listens in-process, so no tool needs attaching, and writes the table when
/// the service stops. The listener itself allocates per event (every ~100 KB), a small share of what it sees.
/// Thread safety: events arrive on any thread; the counts are a concurrent dictionary.
/// </remarks>
public sealed class AllocationProfile : EventListener
{
    private const EventKeywords GcKeyword = (EventKeywords)0x1;
    private readonly ConcurrentDictionary<string, long> _bytes = new(StringComparer.Ordinal);
    private long _samples;

    protected override void OnEventSourceCreated(EventSource source)
    {
        if (source.Name == "Microsoft-Windows-DotNETRuntime") EnableEvents(source, EventLevel.Verbose, GcKeyword);
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (e.EventName is null || !e.EventName.StartsWith("GCAllocationTick", StringComparison.Ordinal) || e.Payload is null) return;
        int typeIndex = e.PayloadNames!.IndexOf("TypeName");
        int amountIndex = e.PayloadNames.IndexOf("AllocationAmount64");
        if (amountIndex < 0) amountIndex = e.PayloadNames.IndexOf("AllocationAmount");
        string type = typeIndex >= 0 ? e.Payload[typeIndex]?.ToString() ?? "?" : "?";
        long amount = amountIndex >= 0 ? Convert.ToInt64(e.Payload[amountIndex], CultureInfo.InvariantCulture) : 0;
        _bytes.AddOrUpdate(type, amount, (_, v) => v + amount);
        Interlocked.Increment(ref _samples);
    }

    /// <summary>The types by sampled bytes, largest first, with their share.</summary>
    public string Report(int top = 40)
    {
        var rows = _bytes.ToArray().OrderByDescending(kv => kv.Value).ToArray();
        double total = Math.Max(1, rows.Sum(kv => kv.Value));
        var text = new StringBuilder();
        text.Append(CultureInfo.InvariantCulture, $"{Interlocked.Read(ref _samples)} allocation ticks, {total / 1e6:0.0} MB sampled\n");
        foreach (var (type, bytes) in rows.Take(top))
            text.Append(CultureInfo.InvariantCulture, $"{100 * bytes / total,6:0.0}%  {bytes / 1e6,8:0.0} MB  {type}\n");
        return text.ToString();
    }
}
