using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>typed-memory states its claim per path: the weakest of the library's paths decides the verdict.</summary>
public sealed class TypedMemoryVerdictTests
{
    private static Measurement M(string variant, string op, double median) => new()
    {
        Variant = variant,
        Unit = op == "heap" ? "B/record" : op == "full-gc" ? "ms" : "ns/op",
        Statistics = Statistics.From([median, median, median]),
        Parameters = Parameters.Of(("op", op), ("records", 1000)),
    };

    private static List<Measurement> Set(double typedHeap, double typedPause) =>
    [
        M("class instances", "heap", 48), M("class instances", "full-gc", 100), M("class instances", "new+delete", 10),
        M("TypeAllocator", "heap", typedHeap), M("TypeAllocator", "full-gc", typedPause), M("TypeAllocator", "new+delete", 40),
        M("TypeAllocator unchecked", "new+delete", 20),
        M("AllocHGlobal per object", "heap", 32), M("AllocHGlobal per object", "full-gc", 90), M("AllocHGlobal per object", "new+delete", 30),
        M("RecordArray (bulk)", "heap", 0.001), M("RecordArray (bulk)", "full-gc", 0.2),
        M("raw AllocHGlobal+FreeHGlobal", "new+delete", 20), M("raw NativeMemory.Alloc+Free", "new+delete", 16),
    ];

    private static TargetResult Target(VerdictResult verdict, string name)
        => Assert.Single(verdict.Targets, t => t.Name.Contains(name, StringComparison.Ordinal));

    [Fact]
    public void Per_object_handles_heavier_than_the_class_reverse_the_verdict_though_the_bulk_path_holds()
    {
        var verdict = new TypedMemory().Judge(Set(typedHeap: 70, typedPause: 150));
        // The claim is judged on the weakest path: min(48 / 70, 100 / 150) = 0.67x the class's GC weight.
        Assert.Equal(Verdict.Reversed, verdict.Verdict);
        Assert.Contains("weakest library path", verdict.Text, StringComparison.Ordinal);
        Assert.Equal(100.0 / 150, verdict.TodayValue!.Value, 6);
        var heavier = Target(verdict, "per-object handles: managed bytes per live record");
        Assert.Equal(70.0 / 48, heavier.Today!.Value, 6);
        Assert.False(heavier.Met);
        Assert.False(Target(verdict, "per-object handles: full gen-2 pause").Met);
        Assert.True(Target(verdict, "RecordArray: full gen-2 pause").Met); // 0.2 ms vs 100 ms
        Assert.Equal(0.5, Target(verdict, "raw AllocHGlobal+FreeHGlobal (per-object handle, checked)").Today!.Value, 9); // 20 ns raw / 40 ns
        Assert.True(Target(verdict, "(per-object handle, unchecked)").Met); // 20 / 20
    }

    [Fact]
    public void Per_object_handles_lighter_than_the_class_let_the_claim_hold()
    {
        var verdict = new TypedMemory().Judge(Set(typedHeap: 20, typedPause: 50));
        // Weakest path: min(48 / 20, 100 / 50) = 2x lighter than the class set, above the rule's 1.1x.
        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(2, verdict.TodayValue!.Value, 6);
        Assert.True(Target(verdict, "per-object handles: managed bytes per live record").Met);
    }
}
