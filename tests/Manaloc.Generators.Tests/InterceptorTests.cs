using System.Collections.Immutable;
using System.Diagnostics.CodeAnalysis;
using System.Text.RegularExpressions;
using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Manaloc.Generators.Tests;

/// <summary>
/// TypeAllocator calls with [NativeRecord] interfaces are intercepted (sent to the compiled registration, so they carry no
/// trim/AOT warning); calls with an unmarked interface, a type parameter, or types not known at compile time are not.
/// </summary>
public class InterceptorTests
{
    private const string Records = """
        using System;
        using Manaloc.Memory;
        namespace App;
        [NativeRecord] public interface IOrder { long Id { get; set; } }
        [NativeRecord] public interface ITrade { int Qty { get; set; } }
        public interface IPlain { int A { get; set; } }

        """;

    private static int InterceptedSites(string? source) => source is null ? 0 : Regex.Matches(source, @"\[global::System\.Runtime\.CompilerServices\.InterceptsLocation\(").Count;

    [Fact]
    public void New_NewArray_and_PreGenerate_with_marked_interfaces_are_intercepted_and_compile()
    {
        var result = GeneratorDriver.Run(Records + """
            public static class Use
            {
                public static void Run(TypeAllocator a)
                {
                    var o = a.New<IOrder>();
                    var o2 = a.New<IOrder>();
                    var t = a.New<ITrade>();
                    using var array = a.NewArray<IOrder>(10);
                    a.PreGenerate(typeof(IOrder), typeof(ITrade));
                    a.PreGenerate(typeof(IOrder));
                }
            }
            """, interceptors: true);

        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.CompilationErrors);
        string source = Assert.IsType<string>(result.Interceptors);
        Assert.Equal(6, InterceptedSites(source));
        // The two New<IOrder> calls share one interceptor; each kind and interface list has its own.
        Assert.Equal(5, Regex.Matches(source, @"public static [^(]+ (New|NewArray|PreGenerate)_\d+\(").Count);
        Assert.Contains("CompiledRecords.New<global::App.IOrder>(allocator, global::App.OrderRef.RecordType)", source);
        Assert.Contains("CompiledRecords.NewArray<global::App.IOrder>(allocator, count, global::App.OrderRef.RecordType)", source);
        Assert.Contains("CompiledRecords.PreGenerate(allocator, global::App.OrderRef.RecordType, global::App.TradeRef.RecordType)", source);
        Assert.Contains("// Snippet.cs(", source); // the position, never a machine's path
        Assert.Contains("namespace Manaloc.Generated", source);
    }

    [Theory]
    [InlineData("a.New<IPlain>();")]
    [InlineData("a.NewArray<IPlain>(3);")]
    [InlineData("Make<IOrder>(a);")] // only the call inside Make<T> names TypeAllocator.New, with T unknown
    [InlineData("a.PreGenerate(typeof(IPlain));")]
    [InlineData("a.PreGenerate(typeof(IOrder), typeof(IPlain));")]
    [InlineData("a.PreGenerate(new[] { typeof(IOrder) });")]
    [InlineData("Type t = typeof(IOrder); a.PreGenerate(t);")]
    [InlineData("a?.New<IOrder>();")]
    public void Calls_that_may_need_dynamic_code_are_not_intercepted(string call)
    {
        var result = GeneratorDriver.Run(Records + $$"""
            public static class Use
            {
                public static void Run(TypeAllocator a) { {{call}} }
                public static T Make<T>(TypeAllocator a) where T : class => a.New<T>();
            }
            """, interceptors: true);

        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.CompilationErrors);
        Assert.Null(result.Interceptors);
    }

    [Fact]
    public void Without_InterceptorsNamespaces_nothing_is_intercepted_and_the_build_stays_clean()
    {
        var result = GeneratorDriver.Run(Records + "public static class Use { public static IOrder Run(TypeAllocator a) => a.New<IOrder>(); }");
        Assert.Empty(result.CompilationErrors);
        Assert.Null(result.Interceptors);
        Assert.Equal(2, result.Sources.Length); // the two records themselves
    }

    [Fact]
    public void A_call_with_a_refused_record_is_not_intercepted()
    {
        // The get-only property refuses IBroken (MNL015): no handle exists, so an interceptor naming it would not compile.
        var result = GeneratorDriver.Run(Records + """
            [NativeRecord] public interface IBroken { int A { get; } }
            public static class Use { public static IBroken Run(TypeAllocator a) => a.New<IBroken>(); }
            """, interceptors: true);
        Assert.Equal("MNL015", Assert.Single(result.GeneratorDiagnostics).Id);
        Assert.Null(result.Interceptors);
        Assert.Empty(result.CompilationErrors);
    }

    [Fact]
    public void A_marked_interface_of_a_referenced_assembly_is_intercepted_through_its_handle()
    {
        var library = GeneratorDriver.Run("namespace Lib { [Manaloc.Memory.NativeRecord] public interface IShared { int A { get; set; } } }");
        Assert.Empty(library.CompilationErrors);
        using var image = new MemoryStream();
        Assert.True(library.Output.WithAssemblyName("Lib").Emit(image).Success);

        var result = GeneratorDriver.Run("public static class Use { public static Lib.IShared Run(Manaloc.Memory.TypeAllocator a) => a.New<Lib.IShared>(); }",
            interceptors: true, references: [MetadataReference.CreateFromImage(image.ToArray())]);
        Assert.Empty(result.CompilationErrors);
        Assert.Contains("global::Lib.SharedRef.RecordType", Assert.IsType<string>(result.Interceptors));
    }

    [Fact]
    public void The_call_step_is_cached_across_an_edit_in_another_file()
    {
        var parseOptions = new CSharpParseOptions(LanguageVersion.Preview).WithFeatures([new("InterceptorsNamespaces", "Manaloc.Generated")]);
        var compilation = GeneratorDriver.Compile(Records + "public static class Use { public static IOrder Run(TypeAllocator a) => a.New<IOrder>(); }", parseOptions);
        Microsoft.CodeAnalysis.GeneratorDriver driver = CSharpGeneratorDriver.Create([new NativeRecordGenerator().AsSourceGenerator()], parseOptions: parseOptions,
            driverOptions: new GeneratorDriverOptions(IncrementalGeneratorOutputKind.None, trackIncrementalGeneratorSteps: true));
        driver = driver.RunGenerators(compilation);
        driver = driver.RunGenerators(compilation.AddSyntaxTrees(CSharpSyntaxTree.ParseText("namespace App; public class Unrelated { }", parseOptions)));

        var reasons = driver.GetRunResult().Results.Single().TrackedSteps[NativeRecordGenerator.CallsTrackingName].SelectMany(s => s.Outputs).Select(o => o.Reason).ToList();
        Assert.NotEmpty(reasons);
        Assert.All(reasons, r => Assert.True(r is IncrementalStepRunReason.Cached or IncrementalStepRunReason.Unchanged, $"step ran again: {r}"));
    }

    [Fact]
    public async Task The_suppressor_quiets_IL2026_and_IL3050_at_intercepted_calls_only()
    {
        var result = GeneratorDriver.Run(Records + """
            public static class Use
            {
                public static void Marked(TypeAllocator a) { a.New<IOrder>(); a.NewArray<IOrder>(Count()); a.PreGenerate(typeof(IOrder)); }
                public static void Unmarked(TypeAllocator a) { a.New<IPlain>(); a.PreGenerate(typeof(IPlain)); }
                public static T Generic<T>(TypeAllocator a) where T : class => a.New<T>();
                [System.Diagnostics.CodeAnalysis.RequiresDynamicCode("x")] private static int Count() => 1;
            }
            """, interceptors: true);
        Assert.Empty(result.CompilationErrors);

        var analyzers = ImmutableArray.Create<DiagnosticAnalyzer>(new RequiresAnalyzerStandIn(), new NativeRecordSuppressor());
        var diagnostics = await result.Output.WithAnalyzers(analyzers, new CompilationWithAnalyzersOptions(
            new AnalyzerOptions([]), onAnalyzerException: null, concurrentAnalysis: false, logAnalyzerExecutionTime: false, reportSuppressedDiagnostics: true))
            .GetAnalyzerDiagnosticsAsync();

        string Line(Diagnostic d) => d.Location.SourceTree!.GetText().Lines.GetLineFromPosition(d.Location.SourceSpan.Start).ToString();
        var suppressed = diagnostics.Where(d => d.IsSuppressed).ToList();
        var reported = diagnostics.Where(d => !d.IsSuppressed).ToList();
        // Marked: New, NewArray and PreGenerate, each IL2026 and IL3050.
        Assert.Equal(6, suppressed.Count);
        Assert.All(suppressed, d => Assert.Contains("Marked(", Line(d)));
        // Kept: the unmarked New and PreGenerate (2 ids each), the generic New (2), and Count() inside the intercepted NewArray (IL3050).
        Assert.Equal(7, reported.Count);
        Assert.Single(reported, d => d.Id == "IL3050" && Line(d).Contains("Marked(", StringComparison.Ordinal));
        Assert.Equal(4, reported.Count(d => Line(d).Contains("Unmarked(", StringComparison.Ordinal)));
        Assert.Equal(2, reported.Count(d => Line(d).Contains("Generic<T>(", StringComparison.Ordinal)));
    }

    /// <summary>Reports IL2026/IL3050 at each call of a method with [RequiresUnreferencedCode]/[RequiresDynamicCode], at the
    /// invocation, as the SDK's trim/AOT analyzer does (the real one is built against a newer Roslyn than these tests).</summary>
    /// <remarks>Not registered as a [DiagnosticAnalyzer]: the test hands it to the compilation directly.</remarks>
#pragma warning disable RS1001, RS1036 // a stand-in handed to one compilation, not a shipped analyzer
    [SuppressMessage("MicrosoftCodeAnalysisReleaseTracking", "RS2008", Justification = "A test stand-in.")]
    private sealed class RequiresAnalyzerStandIn : DiagnosticAnalyzer
    {
        private static readonly DiagnosticDescriptor s_il2026 = new("IL2026", "Requires unreferenced code", "Using member '{0}' which has 'RequiresUnreferencedCodeAttribute'", "Trimming", DiagnosticSeverity.Warning, true);
        private static readonly DiagnosticDescriptor s_il3050 = new("IL3050", "Requires dynamic code", "Using member '{0}' which has 'RequiresDynamicCodeAttribute'", "AOT", DiagnosticSeverity.Warning, true);

        public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => [s_il2026, s_il3050];

        public override void Initialize(AnalysisContext context)
        {
            context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
            context.EnableConcurrentExecution();
            context.RegisterOperationAction(c =>
            {
                var method = ((IInvocationOperation)c.Operation).TargetMethod;
                foreach (var attribute in method.OriginalDefinition.GetAttributes())
                {
                    var d = attribute.AttributeClass?.Name switch
                    {
                        "RequiresUnreferencedCodeAttribute" => s_il2026,
                        "RequiresDynamicCodeAttribute" => s_il3050,
                        _ => null,
                    };
                    if (d is not null) c.ReportDiagnostic(Diagnostic.Create(d, c.Operation.Syntax.GetLocation(), method.Name));
                }
            }, OperationKind.Invocation);
        }
    }
#pragma warning restore RS1001, RS1036
}
