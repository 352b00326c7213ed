using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.Runtime;
using System.Runtime.CompilerServices;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>The workload: the parallel loops, their temporaries and the allocation sampler.</summary>
public sealed partial class GcModes
{
    private static double ClassLoop(int iterations)
    {
        double total = 0;
        Parallel.For(0, iterations, () => 0.0, (i, _, acc) => acc + Length(new Pair(i * 0.5, i * 0.25)), acc => Add(ref total, acc));
        return total;
    }

    private static double StructLoop(int iterations)
    {
        double total = 0;
        Parallel.For(0, iterations, () => 0.0, (i, _, acc) => acc + Length(new PairStruct(i * 0.5, i * 0.25)), acc => Add(ref total, acc));
        return total;
    }

    /// <summary>The class temporary used only inside the body: .NET 10's escape analysis may put it on the stack.</summary>
    private static double NoEscapeLoop(int iterations)
    {
        double total = 0;
        Parallel.For(0, iterations, () => 0.0, (i, _, acc) =>
        {
            var p = new Pair(i * 0.5, i * 0.25);
            return acc + Math.Sqrt(p.X * p.X + p.Y * p.Y);
        }, acc => Add(ref total, acc));
        return total;
    }

    private static void Add(ref double target, double value)
    {
        double current = Volatile.Read(ref target);
        while (true)
        {
            // CAS loop: the only ordering needed is that no thread's partial sum is lost.
            double seen = Interlocked.CompareExchange(ref target, current + value, current);
            if (seen.Equals(current)) return;
            current = seen;
        }
    }

    // Not inlined, so the temporary escapes into a call, as in the article's customer code.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double Length(Pair p) => Math.Sqrt(p.X * p.X + p.Y * p.Y);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double Length(PairStruct p) => Math.Sqrt(p.X * p.X + p.Y * p.Y);

    /// <summary>The article's "pretty simple structure containing two doubles", as a class.</summary>
    private sealed class Pair(double x, double y)
    {
        public double X { get; } = x;
        public double Y { get; } = y;
    }

    /// <summary>The same two doubles as a struct.</summary>
    private readonly struct PairStruct(double x, double y)
    {
        public double X { get; } = x;
        public double Y { get; } = y;
    }

    /// <summary>Counts GC AllocationTick events (keyword GC = 0x1, verbose) per type name.</summary>
    private sealed class AllocationSampler : EventListener
    {
        private readonly ConcurrentDictionary<string, StrongBox<(long Count, long Bytes)>> _types = new(StringComparer.Ordinal);
        private long _total;

        public long TotalSamples => Interlocked.Read(ref _total);

        public (string Type, long Count, long Bytes)[] Snapshot()
            => _types.Select(kv => { var v = kv.Value.Value; return (kv.Key, v.Count, v.Bytes); }).ToArray();

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
            {
                EnableEvents(eventSource, EventLevel.Verbose, (EventKeywords)0x1);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.EventName is null || !eventData.EventName.StartsWith("GCAllocationTick", StringComparison.Ordinal) || eventData.PayloadNames is null) return;
            int typeIndex = eventData.PayloadNames.IndexOf("TypeName");
            int amountIndex = eventData.PayloadNames.IndexOf("AllocationAmount64");
            if (amountIndex < 0) amountIndex = eventData.PayloadNames.IndexOf("AllocationAmount");
            string type = typeIndex >= 0 ? eventData.Payload?[typeIndex] as string ?? "?" : "?";
            long amount = amountIndex >= 0 ? Convert.ToInt64(eventData.Payload?[amountIndex], CultureInfo.InvariantCulture) : 0;
            var box = _types.GetOrAdd(type, _ => new StrongBox<(long, long)>());
            lock (box)
            {
                box.Value = (box.Value.Count + 1, box.Value.Bytes + amount);
            }
            Interlocked.Increment(ref _total); // read by the waiting thread to see the stream settle
        }
    }
}
