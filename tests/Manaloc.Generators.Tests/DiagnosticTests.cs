using Microsoft.CodeAnalysis;
namespace Manaloc.Generators.Tests;

/// <summary>Every refused shape gets its diagnostic id, a message naming the member and the reason, and no generated code.</summary>
public class DiagnosticTests
{
    public static TheoryData<string, string, string> RefusedShapes() => new()
    {
        { "MNL001", "internal interface IRec { int A { get; set; } }", "is not public" },
        { "MNL001", "internal static class Holder { [NativeRecord] public interface IRec { int A { get; set; } } }", "containing type Holder is not public" },
        { "MNL002", "public interface IRec<T> where T : unmanaged { T A { get; set; } }", "is generic" },
        { "MNL002", "public static class Holder<T> { [NativeRecord] public interface IRec { int A { get; set; } } }", "containing type Holder is generic" },
        { "MNL003", "public interface IRec { int A { get; set; } void Touch(); }", "member 'IRec.Touch' is a method" },
        { "MNL003", "public interface IBase { int Count(); } [NativeRecord] public interface IRec2 : IBase { int A { get; set; } }", "member 'IBase.Count' is a method" },
        { "MNL004", "public interface IRec { int A { get; set; } event System.Action Changed; }", "member 'IRec.Changed' is an event" },
        { "MNL005", "public interface IRec { int this[int i] { get; set; } }", "is an indexer" },
        { "MNL006", "public interface IRec { int A { get; init; } }", "property 'IRec.A' has an init accessor" },
        { "MNL007", "public interface IRec { string Name { get; set; } }", "type 'string', which is a reference type" },
        { "MNL007", "public struct Holder { public object O; } [NativeRecord] public interface IRec2 { Holder H { get; set; } }", "which is a struct that contains a reference" },
        { "MNL007", "public interface IRec { System.Span<int> S { get; } }", "which is a ref struct" },
        { "MNL007", "public unsafe interface IRec { int* P { get; set; } }", "which is a pointer type (use nint)" },
        { "MNL008", "public interface IRec { static int S { get; set; } }", "property 'IRec.S' is static" },
        { "MNL008", "public interface IRec { int A { get => 1; } }", "has a default implementation" },
        { "MNL009", "public interface IRec { ref int A { get; } }", "returns by reference" },
        { "MNL010", "public interface IRec { internal int A { get; set; } }", "member 'IRec.A' is not public" },
        { "MNL010", "public interface IRec { int A { get; protected set; } }", "member 'IRec.A' is not public" },
        { "MNL011", "public interface IRec { [RecordOffset(2)] int A { get; set; } }", "[RecordOffset(2)] is not a non-negative multiple of the type's natural alignment 4" },
        { "MNL011", "public interface IRec { [RecordOffset(0)] int A { get; set; } [RecordOffset(0)] int B { get; set; } }", "overlaps another property" },
        { "MNL011", "public interface IRec { [RecordOffset(0), OwnCacheLine] int A { get; set; } }", "cannot be combined" },
        { "MNL011", "public interface IBase { [RecordOffset(0)] int A { get; set; } } [NativeRecord] public interface IRec2 : IBase { [RecordOffset(8)] new int A { get; set; } }", "different [RecordOffset] values" },
        { "MNL012", "public interface IRec { [RecordOffset(2147483640)] long A { get; set; } }", "beyond the largest record size" },
        { "MNL013", "public interface IRec { (int, long) Pair { get; set; } }", "a framework struct" },
        { "MNL013", "[System.Runtime.InteropServices.StructLayout(System.Runtime.InteropServices.LayoutKind.Auto)] public struct Loose { public int A; } [NativeRecord] public interface IRec2 { Loose L { get; set; } }", "LayoutKind.Auto" },
        { "MNL015", "public interface IRec { int A { get; } long B { get; set; } }", "property 'IRec.A' has only a getter, so nothing could ever write it and it would always read zero" },
        { "MNL015", "public interface IBase { int A { get; } } [NativeRecord] public interface IRec2 : IBase { long B { get; set; } }", "property 'IBase.A' has only a getter" },
        { "MNL015", "public interface IBase { int A { get; } } [NativeRecord] public interface IRec2 : IBase { new long A { get; set; } }", "property 'IBase.A' has only a getter" },
        { "MNL016", "public struct RecRef { } public interface IRec { int A { get; set; } }", "the generated struct handle 'RecRef' would have the name of the existing struct 'Snippet.RecRef'" },
        { "MNL016", "public class RecUncheckedRef { } public interface IRec { int A { get; set; } }", "handle 'RecUncheckedRef' would have the name of the existing class 'Snippet.RecUncheckedRef'" },
        { "MNL016", "public enum RecRef { A } public interface IRec { int A { get; set; } }", "the existing enum 'Snippet.RecRef'" },
        { "MNL016", "public delegate void RecRef(); public interface IRec { int A { get; set; } }", "the existing delegate 'Snippet.RecRef'" },
        { "MNL016", "public record RecRef(int A); public interface IRec { int A { get; set; } }", "the existing record 'Snippet.RecRef'" },
        { "MNL016", "public interface RecRef { } public interface IRec { int A { get; set; } }", "the existing interface 'Snippet.RecRef'" },
    };

    [Theory]
    [MemberData(nameof(RefusedShapes))]
    public void A_refused_shape_reports_its_diagnostic(string id, string declaration, string reason)
    {
        // The [NativeRecord] goes on the interface named IRec (or IRec2 where the declaration brings its own).
        string source = declaration.Contains("[NativeRecord]", StringComparison.Ordinal)
            ? declaration
            : declaration.Replace("public interface IRec", "[NativeRecord] public interface IRec").Replace("internal interface IRec", "[NativeRecord] internal interface IRec")
                .Replace("public unsafe interface IRec", "[NativeRecord] public unsafe interface IRec");
        var result = GeneratorDriver.Run("using Manaloc.Memory;\nnamespace Snippet;\n" + source);

        var diagnostic = Assert.Single(result.GeneratorDiagnostics);
        Assert.Equal(id, diagnostic.Id);
        Assert.Equal(Microsoft.CodeAnalysis.DiagnosticSeverity.Error, diagnostic.Severity);
        string message = diagnostic.GetMessage(System.Globalization.CultureInfo.InvariantCulture);
        Assert.Contains("cannot be a native record", message);
        Assert.Contains(reason, message);
        // The pipeline keeps locations as values (file, span, line span), so the reported one is a file location: it must
        // name the snippet's file and a span inside its text.
        var where = diagnostic.Location.GetLineSpan();
        Assert.Equal("Snippet.cs", where.Path);
        Assert.InRange(diagnostic.Location.SourceSpan.End, 1, result.Output.SyntaxTrees.First().Length);
        Assert.Empty(result.Sources);
    }

    [Fact]
    public void An_accepted_interface_generates_code_that_compiles_without_errors()
    {
        var result = GeneratorDriver.Run("""
            using Manaloc.Memory;
            namespace Snippet;
            public interface IPointView { int Y { get; } }
            [NativeRecord] public interface IPoint : IPointView { int X { get; set; } new int Y { get; set; } [RecordOffset(8)] long Z { get; set; } }
            public static class Use
            {
                public static long Sum(TypeAllocator a)
                {
                    var p = PointRef.New(a);
                    p.X = 1; p.Z = 2;
                    long sum = p.X + p.Y + p.Z;
                    p.Delete(a);
                    var q = PointUncheckedRef.New(a);
                    q.Delete(a);
                    return sum;
                }
            }
            """);
        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.CompilationErrors);
        var source = Assert.Single(result.Sources);
        Assert.Contains("public readonly partial struct PointRef", source);
        Assert.Contains("public readonly partial struct PointUncheckedRef", source);
        Assert.Contains("[global::System.Runtime.CompilerServices.ModuleInitializer]", source);
        Assert.DoesNotContain("System.Reflection", source);
    }

    [Fact]
    public void An_unmarked_interface_generates_nothing()
    {
        var result = GeneratorDriver.Run("namespace Snippet; public interface IPlain { int A { get; set; } void M(); }");
        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.Sources);
    }
}

/// <summary>The generator's steps are cached: an edit elsewhere regenerates nothing, and an edit in one record redoes that
/// record alone (its models are equatable values, and only the handle-name check sees every record).</summary>
public class IncrementalityTests
{
    private static readonly Microsoft.CodeAnalysis.CSharp.CSharpParseOptions s_parseOptions = new(Microsoft.CodeAnalysis.CSharp.LanguageVersion.Preview);

    private static Microsoft.CodeAnalysis.GeneratorDriver NewDriver()
        => Microsoft.CodeAnalysis.CSharp.CSharpGeneratorDriver.Create(
            [new NativeRecordGenerator().AsSourceGenerator()], parseOptions: s_parseOptions,
            driverOptions: new GeneratorDriverOptions(IncrementalGeneratorOutputKind.None, trackIncrementalGeneratorSteps: true));

    private static List<IncrementalStepRunReason> Reasons(Microsoft.CodeAnalysis.GeneratorDriver driver, string step)
        => driver.GetRunResult().Results.Single().TrackedSteps[step].SelectMany(s => s.Outputs).Select(o => o.Reason).ToList();

    [Fact]
    public void An_unrelated_edit_leaves_the_record_and_name_check_steps_cached()
    {
        var compilation = GeneratorDriver.Compile("using Manaloc.Memory; namespace Snippet; [NativeRecord] public interface IPoint { int X { get; set; } }", s_parseOptions);
        var driver = NewDriver().RunGenerators(compilation);
        driver = driver.RunGenerators(compilation.AddSyntaxTrees(Microsoft.CodeAnalysis.CSharp.CSharpSyntaxTree.ParseText("namespace Snippet; public class Unrelated { }", s_parseOptions)));

        foreach (var step in new[] { NativeRecordGenerator.TrackingName, NativeRecordGenerator.NameCheckTrackingName })
        {
            var reasons = Reasons(driver, step);
            Assert.NotEmpty(reasons);
            Assert.All(reasons, r => Assert.True(r is IncrementalStepRunReason.Cached or IncrementalStepRunReason.Unchanged, $"{step} ran again: {r}"));
        }
        var outputs = driver.GetRunResult().Results.Single().TrackedOutputSteps.SelectMany(s => s.Value).SelectMany(s => s.Outputs).Select(o => o.Reason).ToList();
        Assert.NotEmpty(outputs);
        Assert.All(outputs, r => Assert.True(r is IncrementalStepRunReason.Cached or IncrementalStepRunReason.Unchanged, $"an output ran again: {r}"));
    }

    [Fact]
    public void An_edit_inside_one_record_redoes_that_record_alone()
    {
        const string Other = "using Manaloc.Memory; namespace Snippet; [NativeRecord] public interface IOther { long Y { get; set; } }";
        var point = Microsoft.CodeAnalysis.CSharp.CSharpSyntaxTree.ParseText(
            "using Manaloc.Memory; namespace Snippet; [NativeRecord] public interface IPoint { int X { get; set; } }", s_parseOptions, path: "Point.cs");
        var compilation = GeneratorDriver.Compile(Other, s_parseOptions).AddSyntaxTrees(point);
        var driver = NewDriver().RunGenerators(compilation);
        var edited = Microsoft.CodeAnalysis.CSharp.CSharpSyntaxTree.ParseText(
            "using Manaloc.Memory; namespace Snippet; [NativeRecord] public interface IPoint { int X { get; set; } double Z { get; set; } }", s_parseOptions, path: "Point.cs");
        driver = driver.RunGenerators(compilation.ReplaceSyntaxTree(point, edited));

        // The record step: IOther's model is the same value, IPoint's is new.
        var records = Reasons(driver, NativeRecordGenerator.TrackingName);
        Assert.Equal(1, records.Count(r => r is IncrementalStepRunReason.Modified));
        Assert.Equal(1, records.Count(r => r is IncrementalStepRunReason.Cached or IncrementalStepRunReason.Unchanged));
        // The handle names did not change, so the one step that sees every record has the same result.
        Assert.All(Reasons(driver, NativeRecordGenerator.NameCheckTrackingName), r => Assert.True(r is IncrementalStepRunReason.Cached or IncrementalStepRunReason.Unchanged, $"the name check changed: {r}"));
        // Per record output: IPoint's source is written again; IOther's is not, nor the (empty) interceptors' output.
        var outputs = driver.GetRunResult().Results.Single().TrackedOutputSteps.SelectMany(s => s.Value).SelectMany(s => s.Outputs).Select(o => o.Reason).ToList();
        Assert.Equal(1, outputs.Count(r => r is IncrementalStepRunReason.Modified));
        Assert.Equal(outputs.Count - 1, outputs.Count(r => r is IncrementalStepRunReason.Cached or IncrementalStepRunReason.Unchanged));
        Assert.True(outputs.Count >= 2, "one output per record");
    }
}
