using LibDeadline = Manaloc.Threading.Deadline;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 002, "Tradeoffs in High Performance Software", tradeoff #4 (heavyweight vs lightweight
/// resources): a shutdown deadline polled for every dequeued item. The article's DateTime.UtcNow
/// deadline generated GC pressure on .NET 4.x, so it switched to a timer-backed ScheduledValue,
/// which costs a timer up front but nothing per poll. Today: poll cost and allocation of a
/// DateTime.UtcNow deadline, Manaloc's Deadline (a monotonic timestamp), ScheduledValue and a
/// CancellationToken from CancelAfter; and the cost of creating each (the other side of the trade).
/// </summary>
public sealed class Deadline() : Experiment(
    "deadline", "Tradeoffs in High Performance Software (seed 002)",
    "Poll and creation cost (ns, bytes) of a DateTime.UtcNow deadline, Deadline, ScheduledValue and a CancelAfter token.",
    [UtcNow, Ours, Scheduled, Token], UtcNow, quickSeconds: 2.5, quickLaunches: 2)
{
    private const string UtcNow = "DateTime.UtcNow deadline", Ours = "Deadline", Scheduled = "ScheduledValue", Token = "CancellationToken (CancelAfter)";

    /// <inheritdoc/>
    public override Claim Claim => new(
        "Polling a DateTime.UtcNow deadline per dequeued item caused heavy GC pressure; a timer-backed ScheduledValue polls without allocating (no figure given).", null,
        new Metric("bytes allocated per DateTime.UtcNow deadline poll", Unit.BytesPerOp, f => f.Value(UtcNow, m => m.AllocatedBytesPerOp, Op("poll"))));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtMost("bytes per Deadline poll", Unit.BytesPerOp, f => f.Value(Ours, m => m.AllocatedBytesPerOp, Op("poll")), 0),
        Target.AtMost("bytes per ScheduledValue poll", Unit.BytesPerOp, f => f.Value(Scheduled, m => m.AllocatedBytesPerOp, Op("poll")), 0),
        Target.AtLeast(Metric.TimesBetter("ScheduledValue poll vs DateTime.UtcNow deadline poll", Scheduled, UtcNow, Op("poll")), 1),
    ];

    private static Func<Measurement, bool> Op(string op) => m => m.Parameters.Is("op", op);
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("ScheduledValue poll vs a DateTime.UtcNow deadline poll (times as fast)", Scheduled, UtcNow, Op("poll")),
        Metric.TimesBetter("Deadline poll vs the DateTime.UtcNow deadline poll (times as fast)", Ours, UtcNow, Op("poll")),
        new Metric("bytes per Deadline poll", Unit.BytesPerOp, f => f.Value(Ours, m => m.AllocatedBytesPerOp, Op("poll"))));
    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("op", "poll: check a live deadline once; create: make one (and dispose it, where disposable)", ["poll", "create"]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var poll = Parameters.Of(("op", "poll"));
        var create = Parameters.Of(("op", "create"));
        var timeout = TimeSpan.FromHours(1);
        bool sink = false;
        long ticks = 0;
        var due = DateTime.UtcNow + timeout;
        var deadline = LibDeadline.After(timeout);
        using var scheduled = new ScheduledValue<bool>(false, true, timeout);
        using var source = new CancellationTokenSource();
        source.CancelAfter(timeout);
        var token = source.Token;

        // Every variant and operation interleaved in one comparison, so outside load falls on all eight alike.
        context.Compare(
        [
            (UtcNow, poll, n => { for (long i = 0; i < n; i++) sink ^= DateTime.UtcNow >= due; }),
            (Ours, poll, n => { for (long i = 0; i < n; i++) sink ^= deadline.IsExpired; }),
            (Scheduled, poll, n => { for (long i = 0; i < n; i++) sink ^= scheduled.Value; }),
            (Token, poll, n => { for (long i = 0; i < n; i++) sink ^= token.IsCancellationRequested; }),
            (UtcNow, create, n => { for (long i = 0; i < n; i++) ticks += (DateTime.UtcNow + timeout).Ticks; }),
            (Ours, create, n => { for (long i = 0; i < n; i++) sink ^= LibDeadline.After(timeout).IsInfinite; }),
            (Scheduled, create, n =>
            {
                for (long i = 0; i < n; i++)
                {
                    using var value = new ScheduledValue<bool>(false, true, timeout);
                    sink ^= value.Value;
                }
            }),
            (Token, create, n =>
            {
                for (long i = 0; i < n; i++)
                {
                    using var made = new CancellationTokenSource(timeout);
                    sink ^= made.IsCancellationRequested;
                }
            }),
        ]);
        GC.KeepAlive(sink);
        GC.KeepAlive(ticks);
        context.Note("poll: one check of a deadline an hour away (never expired). create: one deadline made (and disposed, for the timer-backed ones), which is what a per-request deadline pays.");
    }
}
