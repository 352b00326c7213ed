using System.Text.Json;
using System.Text.Json.Serialization;

namespace HttpApi;

/// <summary>An order as the client sends it.</summary>
public sealed record Order(long Id, string Customer, OrderLine[] Lines);

/// <summary>One line of an order.</summary>
public sealed record OrderLine(string Sku, int Quantity, decimal UnitPrice);

/// <summary>What the service answers for an order.</summary>
public sealed record OrderSummary(long Id, string Customer, int Lines, int Items, decimal Total, string Largest);

/// <summary>The CPU-bound endpoint's answer.</summary>
public sealed record PrimeCount(int Limit, int Count);

/// <summary>What /stats reports: the process's allocation, GC and memory, the Manaloc parts' counters (zero in the defaults build),
/// the bytes Kestrel's memory pool keeps idle (Manaloc's pool's retained bytes, or Kestrel's own pool's pooled bytes from its meter), and the
/// memory the GC has committed (its heap, free space and budgets included), and the idle releases run (Manaloc build).</summary>
public sealed record ServiceStats(string Build, long AllocatedBytes, int Gen0, int Gen1, int Gen2, double GcPauseMs, long WorkingSet, long PeakWorkingSet,
    long Served, long PoolRents, long PoolOutstanding, long Refused, long PoolIdleBytes, long GcCommittedBytes, long IdleReleases);

/// <summary>Source-generated System.Text.Json metadata: no reflection in either build.</summary>
[JsonSerializable(typeof(Order))]
[JsonSerializable(typeof(OrderForm))]
[JsonSerializable(typeof(OrderSummary))]
[JsonSerializable(typeof(PrimeCount))]
[JsonSerializable(typeof(ServiceStats))]
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
public sealed partial class ApiJson : JsonSerializerContext;
