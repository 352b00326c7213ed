using System.Collections.Concurrent;
using System.Linq;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace Manaloc.Analyzers;

/// <summary>What a call does with a resource passed to it.</summary>
internal enum ArgumentFate : byte
{
    /// <summary>Uses it and leaves it to the caller, who still returns or disposes it (CA2000's default for a method call).</summary>
    Borrows,
    /// <summary>May keep it (a field, a collection, an object built around it, a result that carries it): the caller's duty ends.</summary>
    Keeps,
    /// <summary>Returns it to its pool or disposes it (read from the callee's body in this compilation).</summary>
    Releases,
}

/// <summary>
/// Whether passing a pooled array, a buffer owner, a record array or a Manaloc disposable to a method ends the caller's
/// duty to release it. A constructor, a collection's Add, a method whose name says it keeps (<c>Set…</c>, <c>Attach</c>,
/// <c>Register</c>…), a delegate, and a call whose result may carry the resource and is used, keep it. A callee of this
/// compilation is read from its syntax (as <see cref="HeapStores"/> reads where a parameter is stored): stored, captured,
/// handed to a constructor or a keeping method, it keeps it; <c>Return(p)</c> or <c>p.Dispose()</c> releases it; returned, it
/// comes back in the result. Anything else borrows. One answer per parameter, cached.
/// </summary>
internal sealed class ArgumentFates
{
    private enum BodyFate : byte { Borrows, Keeps, Releases, Returns, Unknown }

    private readonly ConcurrentDictionary<IParameterSymbol, BodyFate> _bodies = new(SymbolEqualityComparer.Default);
    private readonly HeapStores _stores;
    private readonly KnownSymbols _known;

    public ArgumentFates(KnownSymbols known, HeapStores stores)
    {
        _known = known;
        _stores = stores;
    }

    public ArgumentFate Of(IArgumentOperation argument)
    {
        if (argument.Parameter is not { RefKind: RefKind.None or RefKind.In or RefKind.RefReadOnlyParameter } parameter) return ArgumentFate.Keeps;
        if (IsRefLike(parameter.Type)) return ArgumentFate.Borrows; // a span of it cannot outlive the call
        if (argument.Parent is not IInvocationOperation invocation) return ArgumentFate.Keeps; // a constructor: the object may own it
        IMethodSymbol method = invocation.TargetMethod;
        if (method.MethodKind == MethodKind.DelegateInvoke || _known.AddsToCollection(method) || KeepsByName(method.Name)) return ArgumentFate.Keeps;
        BodyFate body = method.IsExtensionMethod && method.ReducedFrom is { } reduced
            ? Body(reduced, reduced.Parameters[parameter.Ordinal + 1])
            : Body(method, parameter);
        switch (body)
        {
            case BodyFate.Keeps: return ArgumentFate.Keeps;
            case BodyFate.Releases: return ArgumentFate.Releases;
            case BodyFate.Borrows: return ArgumentFate.Borrows;
            case BodyFate.Returns: return ResultUsed(invocation) ? ArgumentFate.Keeps : ArgumentFate.Borrows;
            default: return ResultUsed(invocation) && CanCarry(method.ReturnType) ? ArgumentFate.Keeps : ArgumentFate.Borrows;
        }
    }

    private static bool KeepsByName(string name) =>
        name.StartsWith("Set", StringComparison.Ordinal) || name.StartsWith("Attach", StringComparison.Ordinal)
        || name.StartsWith("Register", StringComparison.Ordinal) || name.StartsWith("Adopt", StringComparison.Ordinal)
        || name.StartsWith("Keep", StringComparison.Ordinal) || name.StartsWith("Store", StringComparison.Ordinal)
        || name.StartsWith("TakeOwnership", StringComparison.Ordinal) || name.StartsWith("Enqueue", StringComparison.Ordinal)
        || name.StartsWith("Push", StringComparison.Ordinal) || name.StartsWith("Add", StringComparison.Ordinal);

    private static bool ResultUsed(IInvocationOperation invocation)
    {
        if (invocation.TargetMethod.ReturnsVoid) return false;
        IOperation? parent = invocation.Parent;
        while (parent is IConversionOperation or IAwaitOperation) parent = parent.Parent;
        return parent is not IExpressionStatementOperation;
    }

    /// <summary>A value of this type may hold a reference to the resource (a Memory, a segment, a wrapper, a task of one).</summary>
    private bool CanCarry(ITypeSymbol type)
    {
        if (type.SpecialType != SpecialType.None || type.TypeKind == TypeKind.Enum || IsRefLike(type)) return false;
        if (type is INamedTypeSymbol { IsGenericType: true } named && named.Name is "Task" or "ValueTask"
            && named.ContainingNamespace?.ToDisplayString() == "System.Threading.Tasks")
            return CanCarry(named.TypeArguments[0]);
        return !(type.Name is "Task" or "ValueTask" && type.ContainingNamespace?.ToDisplayString() == "System.Threading.Tasks");
    }

    private bool IsRefLike(ITypeSymbol type) => type.IsRefLikeType || KnownSymbols.Is(type, _known.Span) || KnownSymbols.Is(type, _known.ReadOnlySpan);

    private BodyFate Body(IMethodSymbol method, IParameterSymbol parameter) =>
        _bodies.GetOrAdd(parameter, p => Read(method, p));

    private BodyFate Read(IMethodSymbol method, IParameterSymbol parameter)
    {
        if (method.DeclaringSyntaxReferences.Length == 0) return BodyFate.Unknown;
        if (_stores.Keeps(method, parameter, out _)) return BodyFate.Keeps;
        BodyFate fate = BodyFate.Unknown;
        bool sawBody = false;
        foreach (SyntaxReference reference in method.DeclaringSyntaxReferences)
        {
            SyntaxNode node = reference.GetSyntax();
            SyntaxNode? body = node switch
            {
                BaseMethodDeclarationSyntax m => (SyntaxNode?)m.Body ?? m.ExpressionBody,
                LocalFunctionStatementSyntax l => (SyntaxNode?)l.Body ?? l.ExpressionBody,
                _ => null,
            };
            if (body is null) continue;
            sawBody = true;
            fate = Merge(fate, BodyFate.Borrows);
            foreach (IdentifierNameSyntax id in body.DescendantNodes().OfType<IdentifierNameSyntax>())
                if (id.Identifier.ValueText == parameter.Name && !IsMemberName(id))
                    fate = Merge(fate, Use(id, body));
        }
        return sawBody ? fate : BodyFate.Unknown;
    }

    private static bool IsMemberName(IdentifierNameSyntax id) =>
        id.Parent is MemberAccessExpressionSyntax access && access.Name == id;

    /// <summary>Keeps wins over everything, then Releases, then Returns.</summary>
    private static BodyFate Merge(BodyFate a, BodyFate b)
    {
        if (a == BodyFate.Unknown) return b;
        if (a == BodyFate.Keeps || b == BodyFate.Keeps) return BodyFate.Keeps;
        if (a == BodyFate.Releases || b == BodyFate.Releases) return BodyFate.Releases;
        if (a == BodyFate.Returns || b == BodyFate.Returns) return BodyFate.Returns;
        return BodyFate.Borrows;
    }

    private static BodyFate Use(IdentifierNameSyntax id, SyntaxNode body)
    {
        // Inside a lambda or local function of the callee: it may run later, with the resource kept.
        for (SyntaxNode? n = id.Parent; n is not null && n != body; n = n.Parent)
            if (n is AnonymousFunctionExpressionSyntax or LocalFunctionStatementSyntax) return BodyFate.Keeps;
        SyntaxNode expression = id;
        SyntaxNode? parent = id.Parent;
        while (parent is ParenthesizedExpressionSyntax or CastExpressionSyntax or PostfixUnaryExpressionSyntax { RawKind: (int)SyntaxKind.SuppressNullableWarningExpression })
        {
            expression = parent;
            parent = parent.Parent;
        }
        switch (parent)
        {
            // p.Dispose(), p?.Dispose(), p.DisposeAsync()
            case MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Dispose" or "DisposeAsync" } access when access.Expression == expression:
                return BodyFate.Releases;
            case ConditionalAccessExpressionSyntax { WhenNotNull: InvocationExpressionSyntax { Expression: MemberBindingExpressionSyntax { Name.Identifier.ValueText: "Dispose" or "DisposeAsync" } } } c
                when c.Expression == expression:
                return BodyFate.Releases;
            case MemberAccessExpressionSyntax or ElementAccessExpressionSyntax or ConditionalAccessExpressionSyntax or BinaryExpressionSyntax
                or PrefixUnaryExpressionSyntax or IsPatternExpressionSyntax or InterpolationSyntax:
                return BodyFate.Borrows;
            case ArgumentSyntax { Parent: ArgumentListSyntax { Parent: InvocationExpressionSyntax call } list } argument:
            {
                string name = call.Expression switch
                {
                    MemberAccessExpressionSyntax m => m.Name.Identifier.ValueText,
                    IdentifierNameSyntax i => i.Identifier.ValueText,
                    GenericNameSyntax g => g.Identifier.ValueText,
                    _ => "",
                };
                if (!argument.RefKindKeyword.IsKind(SyntaxKind.None)) return BodyFate.Keeps;
                if (name == "Return" && list.Arguments.IndexOf(argument) == 0) return BodyFate.Releases;
                return KeepsByName(name) ? BodyFate.Keeps : BodyFate.Borrows;
            }
            case ReturnStatementSyntax or ArrowExpressionClauseSyntax:
                return BodyFate.Returns;
            case UsingStatementSyntax:
                return BodyFate.Releases;
            default:
                // Assigned, put in a tuple, an initializer, an object's constructor, yielded: it may be kept.
                return BodyFate.Keeps;
        }
    }
}
