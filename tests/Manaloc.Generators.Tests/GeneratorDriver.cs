using System.Collections.Immutable;
using Manaloc.Memory;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace Manaloc.Generators.Tests;

/// <summary>Runs <see cref="NativeRecordGenerator"/> on a snippet compiled against this runtime's assemblies and Manaloc.</summary>
internal static class GeneratorDriver
{
    private static readonly Lazy<ImmutableArray<MetadataReference>> s_references = new(() =>
    {
        // The running framework's implementation assemblies (the trusted platform list) plus Manaloc.
        string paths = (string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!;
        return paths.Split(Path.PathSeparator)
            .Where(p => Path.GetFileName(p).StartsWith("System.", StringComparison.Ordinal) || Path.GetFileName(p) is "mscorlib.dll" or "netstandard.dll")
            .Append(typeof(TypeAllocator).Assembly.Location)
            .Select(p => (MetadataReference)MetadataReference.CreateFromFile(p))
            .ToImmutableArray();
    });

    public sealed record Result(ImmutableArray<Diagnostic> GeneratorDiagnostics, ImmutableArray<Diagnostic> CompilationErrors, ImmutableArray<string> Sources);

    public static CSharpCompilation Compile(string source, CSharpParseOptions parseOptions)
        => CSharpCompilation.Create("Snippet",
            [CSharpSyntaxTree.ParseText(source, parseOptions)],
            s_references.Value,
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, allowUnsafe: true, nullableContextOptions: NullableContextOptions.Enable));

    public static Result Run(string source)
    {
        var parseOptions = new CSharpParseOptions(LanguageVersion.Preview);
        var compilation = Compile(source, parseOptions);
        var driver = CSharpGeneratorDriver.Create([new NativeRecordGenerator().AsSourceGenerator()], parseOptions: parseOptions)
            .RunGeneratorsAndUpdateCompilation(compilation, out var output, out var diagnostics);
        var run = driver.GetRunResult();
        return new Result(
            diagnostics,
            output.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error).ToImmutableArray(),
            run.GeneratedTrees.Select(t => t.ToString()).ToImmutableArray());
    }
}
