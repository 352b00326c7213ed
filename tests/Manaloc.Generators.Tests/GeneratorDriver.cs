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

    public sealed record Result(ImmutableArray<Diagnostic> GeneratorDiagnostics, ImmutableArray<Diagnostic> CompilationErrors, ImmutableArray<string> Sources, Compilation Output)
    {
        /// <summary>The generated interceptors' source, or null when the generator wrote none.</summary>
        public string? Interceptors => Sources.FirstOrDefault(s => s.Contains("file static class NativeRecordInterceptors", StringComparison.Ordinal));
    }

    public static CSharpCompilation Compile(string source, CSharpParseOptions parseOptions, IEnumerable<MetadataReference>? references = null, string assemblyName = "Snippet")
        => CSharpCompilation.Create(assemblyName,
            [CSharpSyntaxTree.ParseText(source, parseOptions, path: "Snippet.cs")],
            s_references.Value.AddRange(references ?? []),
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, allowUnsafe: true, nullableContextOptions: NullableContextOptions.Enable));

    /// <summary>Runs the generator; with <paramref name="interceptors"/> the parse options list the interceptors' namespace, as
    /// the package's build/Manaloc.targets makes a project's do.</summary>
    public static Result Run(string source, bool interceptors = false, IEnumerable<MetadataReference>? references = null)
    {
        var parseOptions = new CSharpParseOptions(LanguageVersion.Preview);
        if (interceptors) parseOptions = parseOptions.WithFeatures([new("InterceptorsNamespaces", "Manaloc.Generated")]);
        var compilation = Compile(source, parseOptions, references);
        var driver = CSharpGeneratorDriver.Create([new NativeRecordGenerator().AsSourceGenerator()], parseOptions: parseOptions)
            .RunGeneratorsAndUpdateCompilation(compilation, out var output, out var diagnostics);
        var run = driver.GetRunResult();
        return new Result(
            diagnostics,
            output.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error).ToImmutableArray(),
            run.GeneratedTrees.Select(t => t.ToString()).ToImmutableArray(),
            output);
    }
}
