using System.Collections.Generic;

namespace Manaloc.Analyzers.CodeFixes;

/// <summary>
/// MNL111 / MNL106 reported at a Return or Dispose that code before it can skip by throwing: wraps the
/// statements between the variable's declaration and that call in <c>try</c> and moves the call into <c>finally</c>.
/// Offered only when the fix is unambiguous: the declaration and the call are statements of the same block, the call
/// is the variable's only release, and nothing declared between them is used after the call.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(MoveReleaseIntoFinallyCodeFix)), Shared]
public sealed class MoveReleaseIntoFinallyCodeFix : CodeFixProvider
{
    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create("MNL111", "MNL106");

    /// <inheritdoc />
    public override FixAllProvider? GetFixAllProvider() => null;

    /// <inheritdoc />
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null) return;
        foreach (Diagnostic diagnostic in context.Diagnostics)
        {
            SyntaxNode node = root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
            if (node.FirstAncestorOrSelf<InvocationExpressionSyntax>() is not { } call || call.Span != diagnostic.Location.SourceSpan) continue;
            if (Plan(call) is not { } plan) continue;
            context.RegisterCodeFix(CodeAction.Create("Move into finally",
                ct => Apply(context.Document, plan, ct), nameof(MoveReleaseIntoFinallyCodeFix)), diagnostic);
        }
    }

    private sealed class FixPlan(BlockSyntax block, int declaration, int release)
    {
        public BlockSyntax Block { get; } = block;
        public int Declaration { get; } = declaration;
        public int Release { get; } = release;
    }

    private static FixPlan? Plan(InvocationExpressionSyntax call)
    {
        if (call.Parent is not ExpressionStatementSyntax { Parent: BlockSyntax block } statement) return null;
        string? name = ReleasedName(call);
        if (name is null) return null;
        int release = block.Statements.IndexOf(statement);
        int declaration = -1;
        for (int i = release - 1; i >= 0; i--)
        {
            if (block.Statements[i] is LocalDeclarationStatementSyntax local && local.Declaration.Variables.Any(v => v.Identifier.ValueText == name))
            {
                declaration = i;
                break;
            }
        }
        if (declaration < 0 || release - declaration < 2) return null;

        var between = block.Statements.Skip(declaration + 1).Take(release - declaration - 1).ToList();
        // The call must be the only release: another Return/Dispose of it between would run twice.
        if (between.SelectMany(s => s.DescendantNodesAndSelf().OfType<InvocationExpressionSyntax>()).Any(i => ReleasedName(i) == name)) return null;
        var declared = new HashSet<string>(between.OfType<LocalDeclarationStatementSyntax>().SelectMany(l => l.Declaration.Variables).Select(v => v.Identifier.ValueText));
        if (declared.Count > 0 && block.Statements.Skip(release + 1)
                .SelectMany(s => s.DescendantNodesAndSelf().OfType<IdentifierNameSyntax>()).Any(id => declared.Contains(id.Identifier.ValueText)))
            return null;
        return new FixPlan(block, declaration, release);
    }

    /// <summary>The variable a Return(x…) or x.Dispose() call releases, by name.</summary>
    private static string? ReleasedName(InvocationExpressionSyntax call) => call.Expression switch
    {
        MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Dispose", Expression: IdentifierNameSyntax target } when call.ArgumentList.Arguments.Count == 0 => target.Identifier.ValueText,
        MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Return" } when call.ArgumentList.Arguments.Count >= 1
            && call.ArgumentList.Arguments[0].Expression is IdentifierNameSyntax argument => argument.Identifier.ValueText,
        _ => null,
    };

    private static async Task<Document> Apply(Document document, FixPlan plan, CancellationToken ct)
    {
        SyntaxNode root = (await document.GetSyntaxRootAsync(ct).ConfigureAwait(false))!;
        SyntaxList<StatementSyntax> statements = plan.Block.Statements;
        var tryBody = SyntaxFactory.Block(statements.Skip(plan.Declaration + 1).Take(plan.Release - plan.Declaration - 1));
        StatementSyntax release = statements[plan.Release];
        TryStatementSyntax tryStatement = SyntaxFactory.TryStatement(
                tryBody, default, SyntaxFactory.FinallyClause(SyntaxFactory.Block(release.WithoutLeadingTrivia())))
            .WithLeadingTrivia(statements[plan.Declaration + 1].GetLeadingTrivia())
            .WithAdditionalAnnotations(Microsoft.CodeAnalysis.Formatting.Formatter.Annotation);
        var updated = new List<StatementSyntax>();
        updated.AddRange(statements.Take(plan.Declaration + 1));
        updated.Add(tryStatement);
        updated.AddRange(statements.Skip(plan.Release + 1));
        BlockSyntax newBlock = plan.Block.WithStatements(SyntaxFactory.List(updated));
        return document.WithSyntaxRoot(root.ReplaceNode(plan.Block, newBlock));
    }
}
