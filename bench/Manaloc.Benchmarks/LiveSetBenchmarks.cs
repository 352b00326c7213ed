using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using Manaloc.Lab.Subjects;

namespace Manaloc.Benchmarks;

/// <summary>
/// The lab's <c>live-set</c> comparison: one full blocking compacting gen-2 collection with a million live records,
/// per representation (the lab's own: class objects, TypeAllocator handles checked and unchecked, 16-byte struct
/// handles in an array, one RecordArray). The extra column gives the managed bytes each representation holds per
/// record, weighed in the host process (full collections around the build, not a timing).
/// </summary>
[Config(typeof(Config))]
public class LiveSetBenchmarks
{
    private LiveSetSubject? _subject;

    /// <summary>The representation of the live set.</summary>
    [Params(LiveSetSubject.Class, LiveSetSubject.Handles, LiveSetSubject.UncheckedHandles, LiveSetSubject.StructHandles, LiveSetSubject.Bulk)]
    public string Representation { get; set; } = LiveSetSubject.Class;

    /// <summary>Live records.</summary>
    [Params(1_000_000)]
    public int Records { get; set; }

    /// <summary>Builds the live set.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _subject = LiveSetSubject.Create(Representation);
        _subject.Allocate(Records);
        _subject.Fill();
    }

    /// <summary>Frees the live set.</summary>
    [GlobalCleanup]
    public void Cleanup() => _subject?.Dispose();

    /// <summary>One full blocking compacting gen-2 collection with the set alive: its pause.</summary>
    [Benchmark]
    public void FullGen2Collection()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.KeepAlive(_subject);
    }

    private sealed class Config : ManualConfig
    {
        public Config() => AddColumn(new ManagedBytesPerRecordColumn());
    }

    /// <summary>Managed bytes per live record of the case's representation, weighed once per case in the host.</summary>
    private sealed class ManagedBytesPerRecordColumn : IColumn
    {
        private readonly Dictionary<string, double> _weighed = [];

        public string Id => nameof(ManagedBytesPerRecordColumn);
        public string ColumnName => "Managed B/record";
        public bool AlwaysShow => true;
        public ColumnCategory Category => ColumnCategory.Custom;
        public int PriorityInCategory => 0;
        public bool IsNumeric => true;
        public UnitType UnitType => UnitType.Dimensionless;
        public string Legend => "Managed heap bytes per live record after full collections, minus the heap before (weighed in the host process)";
        public bool IsAvailable(Summary summary) => true;
        public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;
        public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => GetValue(summary, benchmarkCase);

        public string GetValue(Summary summary, BenchmarkCase benchmarkCase)
        {
            var parameters = benchmarkCase.Parameters;
            string representation = (string)parameters[nameof(Representation)];
            int records = (int)parameters[nameof(Records)];
            string key = $"{representation}/{records}";
            if (!_weighed.TryGetValue(key, out double perRecord))
            {
                using (var warm = LiveSetSubject.Create(representation)) { warm.Allocate(4096); warm.Fill(); }
                using var subject = LiveSetSubject.Create(representation);
                perRecord = LiveSetBytes.Measure(subject, records).PerRecord;
                _weighed[key] = perRecord;
            }
            return perRecord.ToString("0.###", System.Globalization.CultureInfo.InvariantCulture);
        }
    }
}
