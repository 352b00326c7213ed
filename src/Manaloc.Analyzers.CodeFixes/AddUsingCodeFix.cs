namespace Manaloc.Analyzers.CodeFixes;

/// <summary>
/// MNL106 / MNL103: takes a dropped scope, buffer or disposable with <c>using</c>. A discarded result becomes a using
/// declaration of a new local (the lock is then held to the end of the block, which is what the statement meant); a
/// local that is never disposed gets the <c>using</c> keyword. Not offered when the local is disposed somewhere already
/// (a using would dispose it twice) or when the declaration holds several variables.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(AddUsingCodeFix)), Shared]
public sealed class AddUsingCodeFix : CodeFixProvider
{
    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create("MNL106", "MNL103");

    /// <inheritdoc />
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc />
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null) return;
        foreach (Diagnostic diagnostic in context.Diagnostics)
        {
            SyntaxNode node = root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
            if (node.FirstAncestorOrSelf<ExpressionStatementSyntax>() is { } statement && IsDropped(statement, diagnostic.Location))
            {
                context.RegisterCodeFix(CodeAction.Create("Take it with using",
                    ct => UsingForDropped(context.Document, statement, ct), nameof(AddUsingCodeFix) + ".Dropped"), diagnostic);
            }
            else if (node.FirstAncestorOrSelf<VariableDeclaratorSyntax>() is { Parent: VariableDeclarationSyntax { Variables.Count: 1, Parent: LocalDeclarationStatementSyntax local } } declarator
                     && local.UsingKeyword.IsKind(SyntaxKind.None) && local.Parent is BlockSyntax or SwitchSectionSyntax
                     && !IsDisposedAnywhere(local, declarator.Identifier.ValueText))
            {
                context.RegisterCodeFix(CodeAction.Create("Add using",
                    ct => AddUsingKeyword(context.Document, local, ct), nameof(AddUsingCodeFix) + ".Declaration"), diagnostic);
            }
        }
    }

    private static bool IsDropped(ExpressionStatementSyntax statement, Location location)
    {
        ExpressionSyntax expression = statement.Expression;
        if (expression is AssignmentExpressionSyntax { Left: IdentifierNameSyntax { Identifier.ValueText: "_" } } discard) expression = discard.Right;
        return expression.Span == location.SourceSpan && statement.Parent is BlockSyntax or SwitchSectionSyntax;
    }

    private static bool IsDisposedAnywhere(SyntaxNode declaration, string name)
    {
        SyntaxNode body = declaration.Ancestors().FirstOrDefault(a => a is BaseMethodDeclarationSyntax or LocalFunctionStatementSyntax or AnonymousFunctionExpressionSyntax or AccessorDeclarationSyntax) ?? declaration.Parent!;
        return body.DescendantNodes().OfType<InvocationExpressionSyntax>().Any(i =>
            i.Expression is MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Dispose", Expression: IdentifierNameSyntax { Identifier.ValueText: var target } } && target == name);
    }

    private static async Task<Document> UsingForDropped(Document document, ExpressionStatementSyntax statement, CancellationToken ct)
    {
        SyntaxNode root = (await document.GetSyntaxRootAsync(ct).ConfigureAwait(false))!;
        SemanticModel model = (await document.GetSemanticModelAsync(ct).ConfigureAwait(false))!;
        ExpressionSyntax expression = statement.Expression;
        if (expression is AssignmentExpressionSyntax { Left: IdentifierNameSyntax { Identifier.ValueText: "_" } } discard) expression = discard.Right;
        string name = FreeName(model, statement.SpanStart, "scope");
        LocalDeclarationStatementSyntax replacement = SyntaxFactory.LocalDeclarationStatement(
                SyntaxFactory.VariableDeclaration(SyntaxFactory.IdentifierName("var"),
                    SyntaxFactory.SingletonSeparatedList(SyntaxFactory.VariableDeclarator(SyntaxFactory.Identifier(name))
                        .WithInitializer(SyntaxFactory.EqualsValueClause(expression.WithoutTrivia())))))
            .WithUsingKeyword(SyntaxFactory.Token(SyntaxKind.UsingKeyword).WithTrailingTrivia(SyntaxFactory.Space))
            .WithTriviaFrom(statement);
        return document.WithSyntaxRoot(root.ReplaceNode(statement, replacement));
    }

    private static string FreeName(SemanticModel model, int position, string stem)
    {
        for (int i = 1; ; i++)
        {
            string candidate = i == 1 ? stem : stem + i;
            if (model.LookupSymbols(position, name: candidate).IsEmpty) return candidate;
        }
    }

    private static async Task<Document> AddUsingKeyword(Document document, LocalDeclarationStatementSyntax local, CancellationToken ct)
    {
        SyntaxNode root = (await document.GetSyntaxRootAsync(ct).ConfigureAwait(false))!;
        LocalDeclarationStatementSyntax updated = local.WithoutLeadingTrivia()
            .WithUsingKeyword(SyntaxFactory.Token(SyntaxKind.UsingKeyword).WithTrailingTrivia(SyntaxFactory.Space))
            .WithLeadingTrivia(local.GetLeadingTrivia());
        return document.WithSyntaxRoot(root.ReplaceNode(local, updated));
    }
}
