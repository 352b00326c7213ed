using System.Diagnostics;
using Manaloc.Time;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "DateTime.Now in v4.0 Causes Dynamic Memory Allocations": on .NET 4.0 every
/// DateTime.Now call allocated a 32-byte DaylightTime. Today: bytes and nanoseconds per call for
/// every common way to read the time, in this process's time zone and, in a child process, in a
/// zone with daylight saving time (where the 2010 allocation came from).
/// </summary>
public sealed class ClockAllocations() : Experiment(
    "clock-allocations", "DateTime.Now in v4.0 Causes Dynamic Memory Allocations (seed 000)",
    "Bytes allocated and ns per call of DateTime.Now and its alternatives, here and in a DST time zone.",
    [
        "DateTime.Now", "DateTime.UtcNow", "DateTimeOffset.Now", "Stopwatch.GetTimestamp",
        "Environment.TickCount64", "TimeProvider.System", "Clock.GetTimestamp", "Clock.UtcNowUnixNanoseconds"
    ], "DateTime.UtcNow", quickSeconds: 5.5, quickLaunches: 2)
{
    private const string DstZone = "America/New_York";

    /// <inheritdoc/>
    public override Claim Claim => new("DateTime.Now allocated one 32-byte DaylightTime per call on .NET 4.0", 32,
        new Metric("DateTime.Now bytes per call (worst zone)", Unit.BytesPerCall, f => f.All.Where(m => m.Variant == "DateTime.Now").Max(m => m.AllocatedBytesPerOp)));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtMost("Clock bytes per call (worst Clock variant)", Unit.BytesPerCall,
            f => f.All.Where(m => m.Variant.StartsWith("Clock.", StringComparison.Ordinal)).Max(m => m.AllocatedBytesPerOp), 0),
    ];
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("Clock.UtcNowUnixNanoseconds vs DateTime.Now, time per call (times as fast)", "Clock.UtcNowUnixNanoseconds", "DateTime.Now"),
        Metric.TimesBetter("Clock.UtcNowUnixNanoseconds vs DateTime.UtcNow (times as fast)", "Clock.UtcNowUnixNanoseconds", "DateTime.UtcNow"),
        new Metric("Clock bytes per call (worst Clock variant)", Unit.BytesPerCall,
            f => f.All.Where(m => m.Variant.StartsWith("Clock.", StringComparison.Ordinal)).Max(m => m.AllocatedBytesPerOp)));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("zone", "the process's local time zone: this machine's, or a DST zone set through TZ in a child process",
            [TimeZoneInfo.Local.Id, DstZone]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        MeasureAll(context);
        if (OperatingSystem.IsWindows() || !File.Exists(Path.Combine("/usr/share/zoneinfo", DstZone)))
        {
            context.Note($"No tz database entry for {DstZone}: the DST-zone child run was skipped.");
            return;
        }
        var child = context.RunChild("measure", [], new Dictionary<string, string?> { ["TZ"] = DstZone });
        foreach (var m in child.Measurements)
        {
            context.Record(m);
        }
    }

    /// <inheritdoc/>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != "measure") base.RunChild(key, arguments, context);
        MeasureAll(context);
    }

    private static void MeasureAll(ExperimentContext context)
    {
        var p = Parameters.Of(("zone", TimeZoneInfo.Local.Id));
        long sink = 0;
        var system = TimeProvider.System;
        context.Compare(
        [
            ("DateTime.Now", n => { for (long i = 0; i < n; i++) sink += DateTime.Now.Ticks; }),
            ("DateTime.UtcNow", n => { for (long i = 0; i < n; i++) sink += DateTime.UtcNow.Ticks; }),
            ("DateTimeOffset.Now", n => { for (long i = 0; i < n; i++) sink += DateTimeOffset.Now.Ticks; }),
            ("Stopwatch.GetTimestamp", n => { for (long i = 0; i < n; i++) sink += Stopwatch.GetTimestamp(); }),
            ("Environment.TickCount64", n => { for (long i = 0; i < n; i++) sink += Environment.TickCount64; }),
            ("TimeProvider.System", n => { for (long i = 0; i < n; i++) sink += system.GetUtcNow().Ticks; }),
            ("Clock.GetTimestamp", n => { for (long i = 0; i < n; i++) sink += Clock.GetTimestamp(); }),
            ("Clock.UtcNowUnixNanoseconds", n => { for (long i = 0; i < n; i++) sink += Clock.UtcNowUnixNanoseconds(); }),
        ], p);
        GC.KeepAlive(sink);
    }
}
