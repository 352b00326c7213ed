using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace Manaloc.Analyzers;

/// <summary>
/// Which methods and constructors of the compilation keep a held-heap parameter in a field or a property (MNL107 at the
/// call that hands the heap over). Read from the callee's syntax and its type's members, not from a semantic model of
/// another file: an analyzer must not build one, and the shapes that keep a parameter are few (<c>_heap = heap</c>,
/// <c>this.Heap = heap ?? throw …</c>, a record's positional parameter, a primary constructor parameter that a member
/// reads). A callee from another assembly is unknown and not reported. One answer per parameter, cached. The same answer
/// tells <see cref="ArgumentFates"/> that a callee keeps a pooled array or an owner it is given.
/// </summary>
internal sealed class HeapStores
{
    private readonly ConcurrentDictionary<IParameterSymbol, string> _answers = new(SymbolEqualityComparer.Default);

    /// <summary>True when <paramref name="callee"/> keeps <paramref name="parameter"/>; <paramref name="member"/> names where.</summary>
    public bool Keeps(IMethodSymbol callee, IParameterSymbol parameter, out string? member)
    {
        member = _answers.GetOrAdd(parameter, p => Find(callee, p) ?? "");
        if (member.Length == 0) { member = null; return false; }
        return true;
    }

    public static bool IsThreadStatic(ISymbol member)
    {
        foreach (AttributeData attribute in member.GetAttributes())
            if (attribute.AttributeClass?.Name == "ThreadStaticAttribute") return true;
        return false;
    }

    private string? Find(IMethodSymbol callee, IParameterSymbol parameter)
    {
        foreach (SyntaxReference reference in callee.DeclaringSyntaxReferences)
        {
            SyntaxNode node = reference.GetSyntax();
            switch (node)
            {
                // A record's positional parameter becomes a property of the same name.
                case RecordDeclarationSyntax record when record.ParameterList is not null:
                    return parameter.Name;
                // A primary constructor parameter that a member reads is kept in a hidden field for the object's life.
                case TypeDeclarationSyntax type when type.ParameterList is not null:
                    foreach (MemberDeclarationSyntax m in type.Members)
                        foreach (IdentifierNameSyntax id in m.DescendantNodes().OfType<IdentifierNameSyntax>())
                            if (id.Identifier.ValueText == parameter.Name) return parameter.Name;
                    return null;
                case BaseMethodDeclarationSyntax or LocalFunctionStatementSyntax:
                    if (KeptIn(node, callee.ContainingType, parameter.Name) is { } kept) return kept;
                    break;
            }
        }
        return null;
    }

    private static string? KeptIn(SyntaxNode body, INamedTypeSymbol? type, string parameter)
    {
        if (type is null) return null;
        foreach (AssignmentExpressionSyntax assignment in body.DescendantNodes().OfType<AssignmentExpressionSyntax>())
        {
            if (!assignment.IsKind(SyntaxKind.SimpleAssignmentExpression) || !Reads(assignment.Right, parameter)) continue;
            string? name = assignment.Left switch
            {
                MemberAccessExpressionSyntax { Expression: ThisExpressionSyntax } access => access.Name.Identifier.ValueText,
                IdentifierNameSyntax id when !DeclaresLocal(body, id.Identifier.ValueText) => id.Identifier.ValueText,
                _ => null,
            };
            if (name is null) continue;
            foreach (ISymbol member in Members(type, name))
                if (member is IFieldSymbol { IsConst: false } or IPropertySymbol && !IsThreadStatic(member)) return name;
        }
        return null;
    }

    /// <summary>The parameter itself, parenthesized, null-checked (<c>heap ?? throw …</c>) or cast.</summary>
    private static bool Reads(ExpressionSyntax value, string parameter) => value switch
    {
        IdentifierNameSyntax id => id.Identifier.ValueText == parameter,
        ParenthesizedExpressionSyntax p => Reads(p.Expression, parameter),
        BinaryExpressionSyntax b when b.IsKind(SyntaxKind.CoalesceExpression) => Reads(b.Left, parameter),
        CastExpressionSyntax c => Reads(c.Expression, parameter),
        _ => false,
    };

    private static bool DeclaresLocal(SyntaxNode body, string name)
    {
        foreach (SyntaxNode n in body.DescendantNodes())
            if ((n is VariableDeclaratorSyntax v && v.Identifier.ValueText == name)
                || (n is SingleVariableDesignationSyntax d && d.Identifier.ValueText == name)
                || (n is ParameterSyntax p && p.Identifier.ValueText == name))
                return true;
        return false;
    }

    private static IEnumerable<ISymbol> Members(INamedTypeSymbol type, string name)
    {
        for (INamedTypeSymbol? t = type; t is not null; t = t.BaseType)
            foreach (ISymbol member in t.GetMembers(name))
                yield return member;
    }
}
