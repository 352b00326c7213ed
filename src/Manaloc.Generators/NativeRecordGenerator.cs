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

    /// <summary>Name of the step that finds the TypeAllocator calls to intercept, for tests of incrementality.</summary>
    public const string CallsTrackingName = "NativeRecordCalls";

    /// <inheritdoc/>
    public void Initialize(IncrementalGeneratorInitializationContext context)
    {
        var records = context.SyntaxProvider.ForAttributeWithMetadataName(
            AttributeName,
            static (node, _) => node is Microsoft.CodeAnalysis.CSharp.Syntax.InterfaceDeclarationSyntax,
            static (ctx, _) => Build((INamedTypeSymbol)ctx.TargetSymbol, ctx.SemanticModel.Compilation))
            .WithTrackingName(TrackingName);
        var all = records.Collect();
        context.RegisterSourceOutput(all, static (spc, results) =>
        {
            foreach (var (result, refusal) in Accept(results))
            {
                foreach (var diagnostic in result.Diagnostics) spc.ReportDiagnostic(diagnostic);
                if (refusal is not null) spc.ReportDiagnostic(refusal);
                else if (result.Source is not null) spc.AddSource(result.HintName, SourceText.From(result.Source, System.Text.Encoding.UTF8));
            }
        });

        // Calls of New, NewArray and PreGenerate with [NativeRecord] interfaces, redirected to the compiled registrations so
        // that they carry none of the general methods' trim and AOT warnings; only where the project enables interceptors
        // in their namespace (the package's Manaloc.props does), since the compiler refuses them elsewhere.
        var enabled = context.ParseOptionsProvider.Select(static (options, _) => CallSites.InterceptorsEnabled(options));
        var calls = context.SyntaxProvider.CreateSyntaxProvider(
            static (node, _) => CallSites.IsCandidate(node),
            static (ctx, ct) => CallSites.Find(ctx, ct))
            .Where(static call => call is not null)
            .Select(static (call, _) => call!)
            .WithTrackingName(CallsTrackingName);
        context.RegisterSourceOutput(calls.Collect().Combine(all).Combine(enabled), static (spc, input) =>
        {
            var ((found, results), on) = input;
            if (!on || found.IsEmpty) return;
            var accepted = new HashSet<string>();
            foreach (var (result, refusal) in Accept(results))
            {
                if (refusal is null && result.Source is not null) accepted.UnionWith(result.HandleKeys);
            }
            if (InterceptorSource.Write(found, accepted) is { } source)
            {
                spc.AddSource(InterceptorSource.HintName, SourceText.From(source, System.Text.Encoding.UTF8));
            }
        });
    }

    /// <summary>Each record with the diagnostic that refuses it although its shape is right, or null: two records whose handles
    /// would share a name in one namespace (IOuterInner and Outer.IInner, or IXy and Xy, both make XyRef) would break the
    /// user's build with duplicate types, so the first in source order keeps the name.</summary>
    private static List<(Result Result, Diagnostic? Refusal)> Accept(ImmutableArray<Result> results)
    {
        var owners = new Dictionary<string, Result>();
        var accepted = new List<(Result, Diagnostic?)>(results.Length);
        foreach (var result in results)
        {
            if (result.Source is null)
            {
                accepted.Add((result, null));
                continue;
            }
            var taken = result.HandleKeys.Select(k => owners.TryGetValue(k, out var o) ? (k, o) : default).FirstOrDefault(t => t.o is not null);
            if (taken.o is not null)
            {
                accepted.Add((result, Diagnostic.Create(Diagnostics.HandleNameTaken, result.Location, result.DisplayName, taken.k.Substring(taken.k.LastIndexOf('.') + 1), taken.o.DisplayName)));
                continue;
            }
            foreach (var key in result.HandleKeys) owners[key] = result;
            accepted.Add((result, null));
        }
        return accepted;
    }

    private static Result Build(INamedTypeSymbol type, Compilation compilation)
    {
        var diagnostics = new List<Diagnostic>();
        string ns = type.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        string handle = RecordSource.HandleName(type);
        var keys = ImmutableArray.Create(ns + handle, ns + RecordSource.UncheckedHandleName(handle));
        // A type the user (or a referenced assembly) already has under a handle's name: generating the handle would fail the
        // build with duplicate-type errors pointing at the user's code, so the record is refused here with both names.
        var existing = ExistingType(type, compilation, handle) ?? ExistingType(type, compilation, RecordSource.UncheckedHandleName(handle));
        if (existing is not null)
        {
            diagnostics.Add(Diagnostic.Create(Diagnostics.HandleNameExists, type.Locations.FirstOrDefault(), type.ToDisplayString(),
                existing.Name, existing.ToDisplayString(), KindOf(existing)));
        }
        var model = existing is null ? RecordLayout.Compute(type, diagnostics) : null;
        string? source = model is null ? null : RecordSource.Write(model);
        return new Result(RecordSource.HintName(type), source, diagnostics.ToImmutableArray(), keys, type.ToDisplayString(), type.Locations.FirstOrDefault());
    }

    /// <summary>A non-generic type named <paramref name="name"/> in the interface's namespace that this compilation sees (its own,
    /// or a referenced assembly's accessible one), or null.</summary>
    private static INamedTypeSymbol? ExistingType(INamedTypeSymbol type, Compilation compilation, string name)
    {
        var ns = compilation.GetCompilationNamespace(type.ContainingNamespace) ?? type.ContainingNamespace;
        return ns.GetTypeMembers(name, 0).FirstOrDefault(t => compilation.IsSymbolAccessibleWithin(t, compilation.Assembly) && !ExtendsHandle(t, compilation));
    }

    /// <summary>A partial struct of this project with the handle's name: the user's own part of the generated handle (members
    /// added to it), which the generated part merges with, so no clash.</summary>
    private static bool ExtendsHandle(INamedTypeSymbol type, Compilation compilation)
        => type.TypeKind == TypeKind.Struct && SymbolEqualityComparer.Default.Equals(type.ContainingAssembly, compilation.Assembly)
            && type.DeclaringSyntaxReferences.Length > 0
            && type.DeclaringSyntaxReferences.All(r => r.GetSyntax() is Microsoft.CodeAnalysis.CSharp.Syntax.StructDeclarationSyntax declaration
                && declaration.Modifiers.Any(m => m.ValueText == "partial"));

    private static string KindOf(INamedTypeSymbol type) => type.TypeKind switch
    {
        TypeKind.Struct => "struct",
        TypeKind.Class => type.IsRecord ? "record" : "class",
        TypeKind.Enum => "enum",
        TypeKind.Delegate => "delegate",
        TypeKind.Interface => "interface",
        _ => "type",
    };

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
