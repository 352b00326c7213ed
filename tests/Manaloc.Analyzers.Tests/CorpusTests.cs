using System.Collections.Immutable;
using System.Text.RegularExpressions;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;
using Xunit.Abstractions;

namespace Manaloc.Analyzers.Tests;

/// <summary>
/// The corpus (Corpus/*.cs, compiled here, not into this project): correct methods written in the shapes real .NET code
/// uses, and seeded misuses through every kind of control flow. Each method says above it what the analyzer must report
/// inside it ("// expect: none" or "// expect: MNL101, MNL102"). No correct method may be flagged (suggestions
/// included); every seeded misuse must be reported with exactly its rules.
/// </summary>
public sealed partial class CorpusTests(ITestOutputHelper output)
{
    private sealed record Method(string File, string Name, ImmutableHashSet<string> Expected, ImmutableHashSet<string> Actual);

    private static readonly Lazy<Task<ImmutableArray<Method>>> Results = new(Analyze);

    [GeneratedRegex(@"//\s*expect:\s*(?<ids>[A-Za-z0-9, ]+)")]
    private static partial Regex ExpectComment();

    private static async Task<ImmutableArray<Method>> Analyze()
    {
        string folder = Path.Combine(AppContext.BaseDirectory, "Corpus");
        var trees = Directory.GetFiles(folder, "*.cs").Order(StringComparer.Ordinal)
            .Select(path => CSharpSyntaxTree.ParseText(Verify.Usings + File.ReadAllText(path), path: path, options: new CSharpParseOptions(LanguageVersion.Latest)))
            .ToArray();
        Compilation compilation = CSharpCompilation.Create("Corpus", trees, Verify.References,
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, nullableContextOptions: NullableContextOptions.Enable));
        // The generator runs first, as in a real build: the corpus's struct handles (PointRef, PointUncheckedRef) are its output.
        CSharpGeneratorDriver.Create(new Manaloc.Generators.NativeRecordGenerator())
            .RunGeneratorsAndUpdateCompilation(compilation, out compilation, out _);
        var errors = compilation.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error).ToArray();
        Assert.True(errors.Length == 0, "the corpus does not compile:\n" + string.Join("\n", errors.Take(20)));

        ImmutableArray<Diagnostic> diagnostics = await compilation
            .WithAnalyzers(ImmutableArray.Create<DiagnosticAnalyzer>(new ManalocAnalyzer()))
            .GetAnalyzerDiagnosticsAsync();
        // An analyzer exception surfaces as AD0001, which -warnaserror turns into a failed build for every user.
        Assert.DoesNotContain(diagnostics, d => d.Id == "AD0001");

        var methods = ImmutableArray.CreateBuilder<Method>();
        foreach (SyntaxTree tree in trees)
        {
            foreach (MethodDeclarationSyntax method in (await tree.GetRootAsync()).DescendantNodes().OfType<MethodDeclarationSyntax>())
            {
                Match match = ExpectComment().Match(method.GetLeadingTrivia().ToFullString());
                if (!match.Success) continue;
                var expected = match.Groups["ids"].Value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries)
                    .Where(id => id != "none").ToImmutableHashSet();
                var actual = diagnostics
                    .Where(d => d.Location.SourceTree == tree && method.Span.Contains(d.Location.SourceSpan))
                    .Select(d => d.Id).ToImmutableHashSet();
                methods.Add(new Method(Path.GetFileName(tree.FilePath), method.Identifier.Text, expected, actual));
            }
        }
        return methods.ToImmutable();
    }

    [Fact]
    public async Task Correct_methods_are_at_least_150_and_none_is_flagged()
    {
        ImmutableArray<Method> methods = await Results.Value;
        var correct = methods.Where(m => m.Expected.IsEmpty).ToArray();
        var flagged = correct.Where(m => !m.Actual.IsEmpty).ToArray();
        foreach (Method m in flagged) output.WriteLine($"false positive: {m.File} {m.Name}: {string.Join(", ", m.Actual)}");
        output.WriteLine($"{correct.Length} correct methods, {flagged.Length} flagged ({100.0 * flagged.Length / correct.Length:F1}%)");
        Assert.True(correct.Length >= 150, $"the corpus holds {correct.Length} correct methods, fewer than 150");
        Assert.True(flagged.Length == 0,
            $"{flagged.Length} of {correct.Length} correct methods are flagged: " + string.Join("; ", flagged.Select(m => $"{m.Name}: {string.Join(",", m.Actual)}")));
    }

    [Fact]
    public async Task Every_seeded_misuse_is_reported_with_its_rule_and_no_other()
    {
        ImmutableArray<Method> methods = await Results.Value;
        var misuses = methods.Where(m => !m.Expected.IsEmpty).ToArray();
        var wrong = misuses.Where(m => !m.Actual.SetEquals(m.Expected)).ToArray();
        foreach (Method m in wrong) output.WriteLine($"{m.File} {m.Name}: expected {string.Join(",", m.Expected)}, got {string.Join(",", m.Actual)}");
        Assert.True(misuses.Length >= 50, $"only {misuses.Length} seeded misuses");
        Assert.True(wrong.Length == 0,
            "misuses reported wrongly: " + string.Join("; ", wrong.Select(m => $"{m.Name}: expected {string.Join(",", m.Expected)}, got {string.Join(",", m.Actual)}")));
    }

    [Fact]
    public async Task Every_rule_is_seeded_through_every_kind_of_control_flow()
    {
        ImmutableArray<Method> methods = await Results.Value;
        string[] shapes = ["IfElse", "Loop", "TryCatchFinally", "EarlyReturn", "Switch", "LocalFunction", "Lambda"];
        string[] rules = ["MNL101", "MNL102", "MNL103", "MNL104", "MNL105", "MNL106", "MNL107", "MNL108", "MNL109", "MNL110", "MNL111", "MNL112"];
        var missing = new List<string>();
        foreach (string rule in rules)
            foreach (string shape in shapes)
                if (!methods.Any(m => m.Expected.Contains(rule) && m.Name.Contains(shape, StringComparison.Ordinal)))
                    missing.Add($"{rule} through {shape}");
        Assert.True(missing.Count == 0, "no seeded misuse for: " + string.Join(", ", missing));
    }
}
