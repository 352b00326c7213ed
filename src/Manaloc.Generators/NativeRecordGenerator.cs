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
        // All records together, only to refuse two whose handles would share a name in one namespace (IOuterInner and
        // Outer.IInner, or IXy and Xy, both make XyRef): generating both would break the user's build with duplicate types.
        context.RegisterSourceOutput(records.Collect(), static (spc, results) =>
        {
            var owners = new Dictionary<string, Result>();
            foreach (var result in results)
            {
                foreach (var diagnostic in result.Diagnostics) spc.ReportDiagnostic(diagnostic);
                if (result.Source is null) continue;
                var taken = result.HandleKeys.Select(k => owners.TryGetValue(k, out var o) ? (k, o) : default).FirstOrDefault(t => t.o is not null);
                if (taken.o is not null)
                {
                    spc.ReportDiagnostic(Diagnostic.Create(Diagnostics.HandleNameTaken, result.Location, result.DisplayName, taken.k.Substring(taken.k.LastIndexOf('.') + 1), taken.o.DisplayName));
                    continue;
                }
                foreach (var key in result.HandleKeys) owners[key] = result;
                spc.AddSource(result.HintName, SourceText.From(result.Source, System.Text.Encoding.UTF8));
            }
        });
    }

    private static Result Build(INamedTypeSymbol type)
    {
        var diagnostics = new List<Diagnostic>();
        var model = RecordLayout.Compute(type, diagnostics);
        string? source = model is null ? null : RecordSource.Write(model);
        string ns = type.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        string handle = RecordSource.HandleName(type);
        var keys = ImmutableArray.Create(ns + handle, ns + RecordSource.UncheckedHandleName(handle));
        return new Result(RecordSource.HintName(type), source, diagnostics.ToImmutableArray(), keys, type.ToDisplayString(), type.Locations.FirstOrDefault());
    }

    /// <summary>What one interface produced. Equal by value (source text and diagnostics), which is what makes the step cacheable.</summary>
    private sealed class Result : System.IEquatable<Result>
    {
        public Result(string hintName, string? source, ImmutableArray<Diagnostic> diagnostics, ImmutableArray<string> handleKeys, string displayName, Location? location)
        {
            HintName = hintName;
            Source = source;
            Diagnostics = diagnostics;
            HandleKeys = handleKeys;
            DisplayName = displayName;
            Location = location;
        }

        public string HintName { get; }
        /// <summary>The namespace-qualified names of the two struct handles (the checked and the unchecked one).</summary>
        public ImmutableArray<string> HandleKeys { get; }
        public string DisplayName { get; }
        public Location? Location { get; }
        public string? Source { get; }
        public ImmutableArray<Diagnostic> Diagnostics { get; }

        public bool Equals(Result? other)
            => other is not null && HintName == other.HintName && Source == other.Source && Diagnostics.SequenceEqual(other.Diagnostics)
                && HandleKeys.SequenceEqual(other.HandleKeys) && DisplayName == other.DisplayName && Equals(Location, other.Location);

        public override bool Equals(object? obj) => Equals(obj as Result);

        public override int GetHashCode() => (HintName.GetHashCode() * 31) ^ (Source?.GetHashCode() ?? 0);
    }
}
