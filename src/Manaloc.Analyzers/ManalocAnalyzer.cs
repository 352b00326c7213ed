using Microsoft.CodeAnalysis.Diagnostics;

namespace Manaloc.Analyzers;

/// <summary>
/// The MNL1xx rules: pooled arrays, buffer owners, pooled objects, typed memory, lock scopes, Manaloc disposables and
/// held heaps, followed through each method's control flow graph (<see cref="MethodAnalysis"/>), plus the results a
/// statement drops on the floor. A method that calls nothing the rules know is never given a graph.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class ManalocAnalyzer : DiagnosticAnalyzer
{
    /// <inheritdoc />
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } = ImmutableArray.Create(
        Descriptors.RentedNotReturned, Descriptors.ReturnedTwiceOrUsedAfterReturn, Descriptors.BufferOwnerMisuse,
        Descriptors.PooledObjectMisuse, Descriptors.TypedMemoryMisuse, Descriptors.ScopeOrDisposableDropped,
        Descriptors.ThreadAffineEscapes);

    /// <inheritdoc />
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(start =>
        {
            var known = new KnownSymbols(start.Compilation);
            if (!known.Any) return;
            start.RegisterOperationBlockAction(block => AnalyzeBlock(block, known));
            start.RegisterOperationAction(op => AnalyzeDropped(op, known), OperationKind.ExpressionStatement);
            start.RegisterOperationAction(op => AnalyzeFieldStore(op, known), OperationKind.SimpleAssignment);
        });
    }

    private static void AnalyzeBlock(OperationBlockAnalysisContext context, KnownSymbols known)
    {
        foreach (IOperation block in context.OperationBlocks)
        {
            // A method's body (or a constructor's, an accessor's): the blocks a graph is built for.
            if (block is not (IMethodBodyOperation or IConstructorBodyOperation or IBlockOperation)) continue;
            if (!MayMatter(block, known)) continue;
            ControlFlowGraph cfg = context.GetControlFlowGraph(block);
            ImmutableArray<IParameterSymbol> parameters = context.OwningSymbol is IMethodSymbol m ? m.Parameters : ImmutableArray<IParameterSymbol>.Empty;
            var nested = new HashSet<SyntaxNode>();
            foreach (IOperation op in block.Descendants())
                if (op is IAnonymousFunctionOperation or ILocalFunctionOperation && MayMatter(op, known))
                    nested.Add(op.Syntax);
            MethodAnalysis.Analyze(cfg, parameters, known, context.ReportDiagnostic, nested);
        }
    }

    /// <summary>The cheap filter: a call, creation or await the rules know, or a held heap. Most methods have none.</summary>
    private static bool MayMatter(IOperation root, KnownSymbols known)
    {
        foreach (IOperation op in root.Descendants())
        {
            switch (op)
            {
                case IInvocationOperation inv:
                    if (known.Creation(inv) != ResourceKind.None || known.Release(inv, out _) is not null) return true;
                    if (known.IsThreadHeap(inv.TargetMethod.ReturnType)) return true;
                    break;
                case IObjectCreationOperation creation when known.IsOwnedDisposable(creation.Type):
                    return true;
                case IParameterReferenceOperation p when known.IsThreadHeap(p.Type):
                    return true;
            }
        }
        return false;
    }

    /// <summary>A statement that creates a scope, rents, or creates a disposable and keeps nothing: nobody can release it.</summary>
    private static void AnalyzeDropped(OperationAnalysisContext context, KnownSymbols known)
    {
        var statement = (IExpressionStatementOperation)context.Operation;
        IOperation value = statement.Operation;
        if (value is ISimpleAssignmentOperation { Target: IDiscardOperation } discard) value = discard.Value;
        value = Flow.StripConversions(value);
        ResourceKind kind = known.Creation(value);
        string text = value.Syntax.ToString();
        (DiagnosticDescriptor? rule, string why) = kind switch
        {
            ResourceKind.Scope => (Descriptors.ScopeOrDisposableDropped, "is discarded: the lock is taken and never released; take the scope with using"),
            ResourceKind.Disposable => (Descriptors.ScopeOrDisposableDropped, "is discarded: it is never disposed, stored or returned"),
            ResourceKind.PooledArray => (Descriptors.RentedNotReturned, "is discarded, so it is never returned"),
            ResourceKind.BufferOwner => (Descriptors.BufferOwnerMisuse, "is discarded: it is never disposed and its array never goes back to the pool"),
            _ => (null, ""),
        };
        if (rule is not null) context.ReportDiagnostic(Diagnostic.Create(rule, value.Syntax.GetLocation(), text, why));
    }

    /// <summary>A held heap stored in a field outlives the thread that took it (a [ThreadStatic] field is the thread's own).</summary>
    private static void AnalyzeFieldStore(OperationAnalysisContext context, KnownSymbols known)
    {
        var assignment = (ISimpleAssignmentOperation)context.Operation;
        if (assignment.Target is not IFieldReferenceOperation field || !known.IsThreadHeap(field.Field.Type)) return;
        if (Flow.IsNullConstant(assignment.Value)) return;
        foreach (AttributeData attribute in field.Field.GetAttributes())
            if (attribute.AttributeClass?.Name == "ThreadStaticAttribute") return;
        context.ReportDiagnostic(Diagnostic.Create(Descriptors.ThreadAffineEscapes, assignment.Syntax.GetLocation(), field.Field.Name,
            "holds a thread's heap: another thread may read the field and use it"));
    }
}
