namespace Manaloc.Analyzers.CodeFixes;

/// <summary>
/// MNL112 reported at a read, after an await, of a local declared <c>var r = array.MoveTo(i);</c>: declares it
/// <c>var r = array[i];</c> instead, whose item belongs to the caller and stays on its record on any thread. Offered when
/// that declaration is the local's only assignment; a <c>View</c> or the item of a <c>Scan()</c> loop needs the index
/// kept or the values read before the await, which is the author's choice.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(ReadThroughIndexerCodeFix)), Shared]
public sealed class ReadThroughIndexerCodeFix : CodeFixProvider
{
    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create("MNL112");

    /// <inheritdoc />
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc />
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        SemanticModel? model = await context.Document.GetSemanticModelAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null || model is null) return;
        foreach (Diagnostic diagnostic in context.Diagnostics)
        {
            if (root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not IdentifierNameSyntax read
                || model.GetSymbolInfo(read, context.CancellationToken).Symbol is not ILocalSymbol local
                || local.DeclaringSyntaxReferences.Length != 1
                || local.DeclaringSyntaxReferences[0].GetSyntax(context.CancellationToken) is not VariableDeclaratorSyntax
                {
                    Initializer.Value: InvocationExpressionSyntax
                    {
                        Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "MoveTo" } access,
                        ArgumentList.Arguments.Count: 1,
                    } invocation,
                } declarator
                || AssignedElsewhere(declarator, local, model, context.CancellationToken))
                continue;
            context.RegisterCodeFix(CodeAction.Create("Read through the indexer",
                ct => Replace(context.Document, root, invocation, access), nameof(ReadThroughIndexerCodeFix)), diagnostic);
        }
    }

    /// <summary>An assignment to the local besides its declaration (a later move the indexer would not follow).</summary>
    private static bool AssignedElsewhere(VariableDeclaratorSyntax declarator, ILocalSymbol local, SemanticModel model, CancellationToken ct)
    {
        SyntaxNode scope = declarator.FirstAncestorOrSelf<BlockSyntax>() ?? declarator.Parent!;
        foreach (AssignmentExpressionSyntax assignment in scope.DescendantNodes().OfType<AssignmentExpressionSyntax>())
            if (assignment.Left is IdentifierNameSyntax target && target.Identifier.ValueText == local.Name
                && SymbolEqualityComparer.Default.Equals(model.GetSymbolInfo(target, ct).Symbol, local))
                return true;
        return false;
    }

    private static Task<Document> Replace(Document document, SyntaxNode root, InvocationExpressionSyntax invocation, MemberAccessExpressionSyntax access)
    {
        ElementAccessExpressionSyntax indexer = SyntaxFactory.ElementAccessExpression(access.Expression,
                SyntaxFactory.BracketedArgumentList(SyntaxFactory.SeparatedList(invocation.ArgumentList.Arguments)))
            .WithTriviaFrom(invocation);
        return Task.FromResult(document.WithSyntaxRoot(root.ReplaceNode(invocation, indexer)));
    }
}
