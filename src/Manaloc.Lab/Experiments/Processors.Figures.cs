using PlatformProcessors = Manaloc.Platform.Processors;

namespace Manaloc.Lab.Experiments;

/// <summary>The figures and table rows the experiment keeps from each process, and the thread ids it reads.</summary>
public sealed partial class Processors
{
    private static void RecordFigures(ExperimentContext context, string process, PlatformProcessors p)
    {
        var parameters = Parameters.Of(("process", process));
        void Add(string variant, double value) => context.RecordSamples(variant, "processors", [value], parameters, lowerIsBetter: false);
        Add(EnvironmentCount, p.EnvironmentProcessorCount);
        if (p.AffinityCount is int affinity) Add(Affinity, affinity);
        if (p.CpuQuota is double quota) Add(Quota, quota);
        Add(Available, p.AvailableCount);
        if (p.InstalledCount is int installed) Add(Installed, installed);
    }

    private static void Keep(ExperimentContext context, ChildOutput child, List<IReadOnlyList<string>> rows)
    {
        foreach (var m in child.Measurements) context.Record(m);
        foreach (string note in child.Notes) context.Note(note);
        string label = child.Measurements.FirstOrDefault() is { } first && first.Parameters.Contains("process") ? first.Parameters.Text("process") : "child";
        double Value(string name) => child.Values.TryGetValue(name, out double v) ? v : double.NaN;
        rows.Add([label, Fmt(Value("environmentProcessorCount")), Fmt(Value("affinityCount")),
            child.Measurements.FirstOrDefault(m => m.Variant == Quota)?.Statistics.Median.ToString("0.###", CultureInfo.InvariantCulture) ?? "none",
            Fmt(Value("availableCount")), child.Machine?.AffinityMask ?? "?"]);
    }

    private static IReadOnlyList<string> Row(string label, PlatformProcessors p)
        => [label, p.EnvironmentProcessorCount.ToString(CultureInfo.InvariantCulture), p.AffinityCount?.ToString(CultureInfo.InvariantCulture) ?? "?",
            p.CpuQuota?.ToString("0.###", CultureInfo.InvariantCulture) ?? "none", p.AvailableCount.ToString(CultureInfo.InvariantCulture),
            MachineInfo.Current().AffinityMask ?? "?"];

    private static ResultTable Table(List<IReadOnlyList<string>> rows)
        => new("What each process may use", ["process", EnvironmentCount, Affinity, Quota, Available, "process mask"], rows);

    private static string Fmt(double value) => double.IsNaN(value) ? "?" : value.ToString("0", CultureInfo.InvariantCulture);

    private static HashSet<int> ThreadIds()
    {
        var ids = new HashSet<int>();
        try
        {
            foreach (string dir in Directory.GetDirectories("/proc/self/task"))
            {
                if (int.TryParse(Path.GetFileName(dir), NumberStyles.None, CultureInfo.InvariantCulture, out int tid)) ids.Add(tid);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // No thread list: nothing to restore or restrict.
        }
        return ids;
    }
}
