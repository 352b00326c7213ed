using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using System.Threading;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;

namespace Manaloc.Generators;

/// <summary>What kind of TypeAllocator call an interceptor replaces.</summary>
internal enum CallKind
{
    New,
    NewArray,
    PreGenerate,
}

/// <summary>A record interface named by an intercepted call: its type and its checked struct handle, both fully qualified.</summary>
/// <param name="InterfaceName">The interface, <c>global::</c>-qualified.</param>
/// <param name="HandleName">Its checked struct handle (whose static <c>RecordType</c> is the registration), <c>global::</c>-qualified.</param>
/// <param name="LocalKey">For an interface of the compilation being generated: the namespace-qualified handle name the record
/// step owns (the call is intercepted only if that step accepted the interface); null for an interface of a referenced
/// assembly, whose handle was found in metadata.</param>
internal sealed record RecordTarget(string InterfaceName, string HandleName, string? LocalKey);

/// <summary>One call to intercept: where it is (Roslyn's interceptable location: version and data) and what it names.</summary>
/// <remarks>Plain strings and numbers only, so the pipeline step compares by value and stays cached across edits elsewhere.</remarks>
internal sealed record InterceptedCall(CallKind Kind, int LocationVersion, string LocationData, string DisplayLocation, EquatableArray<RecordTarget> Targets);

/// <summary>
/// Finds the calls <c>TypeAllocator.New&lt;T&gt;()</c>, <c>NewArray&lt;T&gt;(count)</c> and <c>PreGenerate(typeof(A), ...)</c>
/// whose interfaces are all [NativeRecord]: those the generator redirects to the compiled registration.
/// </summary>
internal static class CallSites
{
    private const string AllocatorName = "Manaloc.Memory.TypeAllocator";
    private const string AttributeName = "Manaloc.Memory.NativeRecordAttribute";

    /// <summary>The namespace of the generated interceptors; the package's Manaloc.props lists it in InterceptorsNamespaces.</summary>
    public const string InterceptorNamespace = "Manaloc.Generated";

    /// <summary>A cheap syntactic filter: <c>x.New&lt;T&gt;()</c>, <c>x.NewArray&lt;T&gt;(n)</c>, <c>x.PreGenerate(...)</c>.</summary>
    public static bool IsCandidate(SyntaxNode node)
        => node is InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name: var name } }
            && (name is GenericNameSyntax { Identifier.ValueText: "New" or "NewArray", TypeArgumentList.Arguments.Count: 1 }
                || name is IdentifierNameSyntax { Identifier.ValueText: "PreGenerate" });

    /// <summary>True when the compiler will accept interceptors in <see cref="InterceptorNamespace"/> (the MSBuild property
    /// InterceptorsNamespaces lists it); without it the calls keep their warnings rather than break the build.</summary>
    public static bool InterceptorsEnabled(ParseOptions options)
        => options is CSharpParseOptions csharp && csharp.LanguageVersion >= LanguageVersion.CSharp12
            && (Listed(csharp, "InterceptorsNamespaces") || Listed(csharp, "InterceptorsPreviewNamespaces"));

    private static bool Listed(CSharpParseOptions options, string feature)
        => options.Features.TryGetValue(feature, out var list)
            && list.Split(';').Any(n => n.Trim() == InterceptorNamespace);

    /// <summary>The call to intercept, or null when it is not one (another method, a type parameter or an unmarked
    /// interface for T, an array or a non-typeof argument for PreGenerate).</summary>
    public static InterceptedCall? Find(GeneratorSyntaxContext context, CancellationToken cancellationToken)
    {
        var invocation = (InvocationExpressionSyntax)context.Node;
        if (context.SemanticModel.GetOperation(invocation, cancellationToken) is not IInvocationOperation operation) return null;
        var targets = Targets(operation, context.SemanticModel.Compilation, out var kind);
        if (targets is null) return null;
        var location = context.SemanticModel.GetInterceptableLocation(invocation, cancellationToken);
        if (location is null) return null;
        // The comment beside the attribute: file name and position only, so the generated text holds no machine's path.
        var span = invocation.GetLocation().GetLineSpan();
        string where = $"{System.IO.Path.GetFileName(span.Path)}({span.StartLinePosition.Line + 1},{span.StartLinePosition.Character + 1})";
        return new InterceptedCall(kind, location.Version, location.Data, where, new EquatableArray<RecordTarget>(targets.Value));
    }

    /// <summary>The record interfaces of a call the generator intercepts (see <see cref="Find"/>), or null.</summary>
    public static ImmutableArray<RecordTarget>? Targets(IInvocationOperation operation, Compilation compilation, out CallKind kind)
    {
        kind = default;
        var method = operation.TargetMethod;
        if (method.IsStatic || method.ContainingType is not { } owner || ValueLayout.FullName(owner) != AllocatorName) return null;
        if (operation.Instance is null) return null;
        switch (method.Name)
        {
            case "New" when method.TypeArguments.Length == 1 && method.Parameters.Length == 0:
            case "NewArray" when method.TypeArguments.Length == 1 && method.Parameters.Length == 1:
                kind = method.Name == "New" ? CallKind.New : CallKind.NewArray;
                return Target(method.TypeArguments[0], compilation) is { } one ? ImmutableArray.Create(one) : null;
            case "PreGenerate" when method.Parameters.Length == 1 && method.Parameters[0].IsParams:
                kind = CallKind.PreGenerate;
                // Only the expanded params form with typeof arguments names its types at compile time.
                if (operation.Arguments.Length != 1 || operation.Arguments[0].ArgumentKind != ArgumentKind.ParamArray
                    || operation.Arguments[0].Value is not IArrayCreationOperation { Initializer: { } initializer }) return null;
                var targets = ImmutableArray.CreateBuilder<RecordTarget>(initializer.ElementValues.Length);
                foreach (var element in initializer.ElementValues)
                {
                    if (Unwrap(element) is not ITypeOfOperation typeOf || Target(typeOf.TypeOperand, compilation) is not { } target) return null;
                    targets.Add(target);
                }
                return targets.MoveToImmutable();
            default:
                return null;
        }
    }

    private static IOperation Unwrap(IOperation operation)
        => operation is IConversionOperation { IsImplicit: true } conversion ? conversion.Operand : operation;

    private static RecordTarget? Target(ITypeSymbol type, Compilation compilation)
    {
        if (type is not INamedTypeSymbol { TypeKind: TypeKind.Interface } named) return null;
        if (!named.GetAttributes().Any(a => a.AttributeClass is { } c && ValueLayout.FullName(c) == AttributeName)) return null;
        string ns = named.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        string handle = RecordSource.HandleName(named);
        string iface = named.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat);
        if (SymbolEqualityComparer.Default.Equals(named.ContainingAssembly, compilation.Assembly))
        {
            return new RecordTarget(iface, "global::" + ns + handle, ns + handle);
        }
        // A record of a referenced assembly: its generator wrote the handle there (public, with the registration as RecordType).
        var found = named.ContainingAssembly.GetTypeByMetadataName(ns + handle);
        if (found is null || !found.GetMembers("RecordType").OfType<IPropertySymbol>().Any(p => p.IsStatic && p.DeclaredAccessibility == Accessibility.Public)) return null;
        return new RecordTarget(iface, found.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat), null);
    }
}
