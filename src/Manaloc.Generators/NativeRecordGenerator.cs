using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Text;

namespace Manaloc.Generators;

/// <summary>
/// The incremental generator for <c>[Manaloc.Memory.NativeRecord]</c> interfaces: per interface, either
/// the implementation (classes for New, struct handles, a registering module initializer) or the
/// diagnostics that say why the shape is refused.
/// </summary>
/// <remarks>The pipeline keys on the attribute's metadata name, so only marked interfaces are looked at;
/// each result is plain text and diagnostics, compared by value, so an edit elsewhere regenerates nothing.</remarks>
[Generator(LanguageNames.CSharp)]
public sealed class NativeRecordGenerator : IIncrementalGenerator
{
    private const string AttributeName = "Manaloc.Memory.NativeRecordAttribute";

    /// <summary>Name of the per-interface step, for tests of incrementality.</summary>
    public const string TrackingName = "NativeRecords";

    /// <inheritdoc/>
    public void Initialize(IncrementalGeneratorInitializationContext context)
    {
        var records = context.SyntaxProvider.ForAttributeWithMetadataName(
            AttributeName,
            static (node, _) => node is Microsoft.CodeAnalysis.CSharp.Syntax.InterfaceDeclarationSyntax,
            static (ctx, _) => Build((INamedTypeSymbol)ctx.TargetSymbol))
            .WithTrackingName(TrackingName);
        context.RegisterSourceOutput(records, static (spc, result) =>
        {
            foreach (var diagnostic in result.Diagnostics) spc.ReportDiagnostic(diagnostic);
            if (result.Source is not null) spc.AddSource(result.HintName, SourceText.From(result.Source, System.Text.Encoding.UTF8));
        });
    }

    private static Result Build(INamedTypeSymbol type)
    {
        var diagnostics = new List<Diagnostic>();
        var model = RecordLayout.Compute(type, diagnostics);
        string? source = model is null ? null : RecordSource.Write(model);
        return new Result(RecordSource.HintName(type), source, diagnostics.ToImmutableArray());
    }

    /// <summary>What one interface produced. Equal by value (source text and diagnostics), which is what makes the step cacheable.</summary>
    private sealed class Result : System.IEquatable<Result>
    {
        public Result(string hintName, string? source, ImmutableArray<Diagnostic> diagnostics)
        {
            HintName = hintName;
            Source = source;
            Diagnostics = diagnostics;
        }

        public string HintName { get; }
        public string? Source { get; }
        public ImmutableArray<Diagnostic> Diagnostics { get; }

        public bool Equals(Result? other)
            => other is not null && HintName == other.HintName && Source == other.Source && Diagnostics.SequenceEqual(other.Diagnostics);

        public override bool Equals(object? obj) => Equals(obj as Result);

        public override int GetHashCode() => (HintName.GetHashCode() * 31) ^ (Source?.GetHashCode() ?? 0);
    }
}
