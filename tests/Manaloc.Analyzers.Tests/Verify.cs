using System.Collections.Immutable;
using Manaloc.Analyzers;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Testing;

namespace Manaloc.Analyzers.Tests;

/// <summary>
/// Runs the analyzer (and a code fix) through Microsoft.CodeAnalysis.Testing against the running framework's assemblies,
/// Manaloc and Microsoft.Extensions.ObjectPool: the testing library's default reference packs are downloaded at test
/// time, which CI (no network beyond the package mirror) cannot do.
/// </summary>
internal static class Verify
{
    /// <summary>No reference package: every reference comes from <see cref="References"/>.</summary>
    private static readonly ReferenceAssemblies NoPackages = new("net10.0");

    public static readonly ImmutableArray<MetadataReference> References = LoadReferences();

    private static ImmutableArray<MetadataReference> LoadReferences()
    {
        var paths = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator);
        var refs = ImmutableArray.CreateBuilder<MetadataReference>();
        foreach (string path in paths)
        {
            string name = Path.GetFileName(path);
            // The framework and the two libraries the rules know; not the test host, xunit or Roslyn itself.
            if (name.StartsWith("System.", StringComparison.Ordinal) || name is "mscorlib.dll" or "netstandard.dll"
                || name is "Manaloc.dll" or "Microsoft.Extensions.ObjectPool.dll" or "Microsoft.Win32.Primitives.dll")
                refs.Add(MetadataReference.CreateFromFile(path));
        }
        return refs.ToImmutable();
    }

    public const string Usings = """
        using System;
        using System.Buffers;
        using System.Collections.Generic;
        using System.Threading;
        using System.Threading.Tasks;
        using Manaloc.Buffers;
        using Manaloc.Memory;
        using Manaloc.Pooling;
        using Manaloc.Threading;

        """;

    /// <summary>Expects exactly the diagnostics marked in <paramref name="source"/> ({|MNL101:…|}).</summary>
    public static Task Analyzer(string source) => Analyzer(source, []);

    /// <summary>Expects exactly <paramref name="expected"/> (ids, spans and message arguments) besides any markup.</summary>
    public static Task Analyzer(string source, params DiagnosticResult[] expected)
    {
        var test = new CSharpAnalyzerTest<ManalocAnalyzer, DefaultVerifier>
        {
            ReferenceAssemblies = NoPackages,
            TestCode = Usings + source,
        };
        test.TestState.AdditionalReferences.AddRange(References);
        test.ExpectedDiagnostics.AddRange(expected);
        return test.RunAsync();
    }

    public static Task CodeFix<TFix>(string source, string fixedSource) where TFix : CodeFixProvider, new()
    {
        var test = new CSharpCodeFixTest<ManalocAnalyzer, TFix, DefaultVerifier>
        {
            ReferenceAssemblies = NoPackages,
            TestCode = Usings + source,
            FixedCode = Usings + fixedSource,
        };
        test.TestState.AdditionalReferences.AddRange(References);
        test.FixedState.AdditionalReferences.AddRange(References);
        return test.RunAsync();
    }
}
