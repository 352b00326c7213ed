namespace Manaloc.Analyzers.CodeFixes;

/// <summary>
/// MNL112 reported at a shared array's <c>array.MoveTo(i)</c>: reads the record through the indexer instead,
/// <c>array[i]</c>, whose item belongs to the caller and stays on its record. Offered for <c>MoveTo</c> only; a
/// <c>Scan()</c> or <c>View</c> needs a loop over the indexer or a view of its own, which is the author's choice.
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
        if (root is null) return;
        foreach (Diagnostic diagnostic in context.Diagnostics)
        {
            if (root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not InvocationExpressionSyntax
                {
                    Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "MoveTo" } access,
                    ArgumentList.Arguments.Count: 1,
                } invocation)
                continue;
            context.RegisterCodeFix(CodeAction.Create("Read through the indexer",
                ct => Replace(context.Document, root, invocation, access), nameof(ReadThroughIndexerCodeFix)), diagnostic);
        }
    }

    private static Task<Document> Replace(Document document, SyntaxNode root, InvocationExpressionSyntax invocation, MemberAccessExpressionSyntax access)
    {
        ElementAccessExpressionSyntax indexer = SyntaxFactory.ElementAccessExpression(access.Expression,
                SyntaxFactory.BracketedArgumentList(SyntaxFactory.SeparatedList(invocation.ArgumentList.Arguments)))
            .WithTriviaFrom(invocation);
        return Task.FromResult(document.WithSyntaxRoot(root.ReplaceNode(invocation, indexer)));
    }
}
