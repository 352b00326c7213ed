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
/// <remarks>The pipeline keys on the attribute's metadata name, so only marked interfaces are looked at. Each step's result is
/// an equatable model (strings, numbers, <see cref="DiagnosticInfo"/>; no symbol, Diagnostic or Location), so an edit
/// elsewhere leaves it cached. Each interface is reported and written on its own; the only step that sees all of them is
/// the check that two records do not claim one struct handle name, and it carries the handle names alone.</remarks>
[Generator(LanguageNames.CSharp)]
public sealed class NativeRecordGenerator : IIncrementalGenerator
{
    private const string AttributeName = "Manaloc.Memory.NativeRecordAttribute";

    /// <summary>Name of the per-interface step, for tests of incrementality.</summary>
    public const string TrackingName = "NativeRecords";

    /// <summary>Name of the step that checks the handle names of all records, for tests of incrementality.</summary>
    public const string NameCheckTrackingName = "NativeRecordHandleNames";

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

        // The one place that must see every record: two records whose handles would share a name. Only the accepted records'
        // handle names go in, so an edit inside one record's properties does not reach it.
        var claims = records
            .Where(static r => r.Model is not null)
            .Select(static (r, _) => new HandleClaim(r.HintName, r.HandleKeys, r.DisplayName, r.Location))
            .Collect()
            .Select(static (all, _) => NameCheck.Of(all))
            .WithTrackingName(NameCheckTrackingName);
        var refusals = claims.Select(static (check, _) => check.Refusals);
        var acceptedKeys = claims.Select(static (check, _) => check.AcceptedKeys);

        // Per record: its diagnostics, then its source unless the name check refused it.
        context.RegisterSourceOutput(records.Combine(refusals), static (spc, input) =>
        {
            var (result, refused) = input;
            foreach (var diagnostic in result.Diagnostics) spc.ReportDiagnostic(diagnostic.ToDiagnostic());
            if (result.Model is null) return;
            var refusal = refused.FirstOrDefault(r => r.HintName == result.HintName);
            if (refusal is not null) spc.ReportDiagnostic(refusal.Diagnostic.ToDiagnostic());
            else spc.AddSource(result.HintName, SourceText.From(RecordSource.Write(result.Model), System.Text.Encoding.UTF8));
        });

        // Calls of New, NewArray and PreGenerate with [NativeRecord] interfaces, redirected to the compiled registrations so
        // that they carry none of the general methods' trim and AOT warnings; only where the project enables interceptors
        // in their namespace (the package's Manaloc.props does), since the compiler refuses them elsewhere. Collected: the
        // interceptors of a compilation are one file.
        var enabled = context.ParseOptionsProvider.Select(static (options, _) => CallSites.InterceptorsEnabled(options));
        var calls = context.SyntaxProvider.CreateSyntaxProvider(
            static (node, _) => CallSites.IsCandidate(node),
            static (ctx, ct) => CallSites.Find(ctx, ct))
            .Where(static call => call is not null)
            .Select(static (call, _) => call!)
            .WithTrackingName(CallsTrackingName);
        context.RegisterSourceOutput(calls.Collect().Combine(acceptedKeys).Combine(enabled), static (spc, input) =>
        {
            var ((found, accepted), on) = input;
            if (!on || found.IsEmpty) return;
            if (InterceptorSource.Write(found, new HashSet<string>(accepted)) is { } source)
            {
                spc.AddSource(InterceptorSource.HintName, SourceText.From(source, System.Text.Encoding.UTF8));
            }
        });
    }

    /// <summary>What the name check needs of an accepted record.</summary>
    private sealed record HandleClaim(string HintName, EquatableArray<string> HandleKeys, string DisplayName, LocationInfo? Location);

    /// <summary>The records refused because an earlier one took a handle name, and the handle names of those generated.</summary>
    private sealed record NameCheck(EquatableArray<Refusal> Refusals, EquatableArray<string> AcceptedKeys)
    {
        /// <summary>Two records whose handles would share a name in one namespace (IOuterInner and Outer.IInner, or IXy and Xy,
        /// both make XyRef) would break the user's build with duplicate types, so the first in source order keeps the name.</summary>
        public static NameCheck Of(ImmutableArray<HandleClaim> claims)
        {
            var owners = new Dictionary<string, HandleClaim>();
            var refusals = new List<Refusal>();
            foreach (var claim in claims)
            {
                var taken = claim.HandleKeys.Select(k => owners.TryGetValue(k, out var o) ? (k, o) : default).FirstOrDefault(t => t.o is not null);
                if (taken.o is not null)
                {
                    refusals.Add(new Refusal(claim.HintName, new DiagnosticInfo(Diagnostics.HandleNameTaken, claim.Location,
                        new[] { claim.DisplayName, taken.k.Substring(taken.k.LastIndexOf('.') + 1), taken.o.DisplayName }.ToEquatableArray())));
                    continue;
                }
                foreach (var key in claim.HandleKeys) owners[key] = claim;
            }
            return new NameCheck(refusals.ToEquatableArray(), owners.Keys.OrderBy(k => k, System.StringComparer.Ordinal).ToEquatableArray());
        }
    }

    private static RecordResult Build(INamedTypeSymbol type, Compilation compilation)
    {
        var diagnostics = new List<DiagnosticInfo>();
        string ns = type.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        string handle = RecordSource.HandleName(type);
        var keys = new[] { ns + handle, ns + RecordSource.UncheckedHandleName(handle) }.ToEquatableArray();
        // A type the user (or a referenced assembly) already has under a handle's name: generating the handle would fail the
        // build with duplicate-type errors pointing at the user's code, so the record is refused here with both names.
        var existing = ExistingType(type, compilation, handle) ?? ExistingType(type, compilation, RecordSource.UncheckedHandleName(handle));
        if (existing is not null)
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.HandleNameExists, type.Locations.FirstOrDefault(), type.ToDisplayString(),
                existing.Name, existing.ToDisplayString(), KindOf(existing)));
        }
        var model = existing is null ? RecordLayout.Compute(type, handle, diagnostics) : null;
        return new RecordResult(RecordSource.HintName(type), model, diagnostics.ToEquatableArray(), keys, type.ToDisplayString(),
            LocationInfo.From(type.Locations.FirstOrDefault()));
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
}
