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
        Statistics = Statistics.From([median]),
        Parameters = new Dictionary<string, string> { ["op"] = op, ["records"] = "1000" },
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

    [Fact]
    public void Per_object_handles_heavier_than_the_class_reverse_the_verdict_though_the_bulk_path_holds()
    {
        var verdict = new TypedMemory().Judge(Set(typedHeap: 70, typedPause: 150));
        Assert.Equal(Verdict.Reversed, verdict.Verdict);
        Assert.Contains("per-object TypeAllocator handles: HEAVIER on the GC", verdict.Text, StringComparison.Ordinal);
        Assert.Contains("the bulk RecordArray: under a tenth", verdict.Text, StringComparison.Ordinal);
        var checkedVsRaw = Assert.Single(verdict.Targets, t => t.Name.Contains("raw AllocHGlobal+FreeHGlobal (per-object handle, checked)", StringComparison.Ordinal));
        Assert.Equal(0.5, checkedVsRaw.Today!.Value, 9); // 20 ns raw / 40 ns New+Delete
        var uncheckedVsRaw = Assert.Single(verdict.Targets, t => t.Name.Contains("(per-object handle, unchecked)", StringComparison.Ordinal));
        Assert.True(uncheckedVsRaw.Met); // 20 / 20
        Assert.Contains("checked 0.5x / 0.4x", verdict.Text, StringComparison.Ordinal); // vs raw AllocHGlobal / raw NativeMemory.Alloc
    }

    [Fact]
    public void Per_object_handles_lighter_than_the_class_leave_the_claim_shrunk_not_held()
    {
        var verdict = new TypedMemory().Judge(Set(typedHeap: 20, typedPause: 50));
        Assert.Equal(Verdict.Shrinks, verdict.Verdict);
        Assert.Contains("per-object TypeAllocator handles: lighter on the GC", verdict.Text, StringComparison.Ordinal);
    }
}
