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
        Descriptors.ThreadAffineEscapes, Descriptors.DefaultHandleUsed, Descriptors.MovingViewKept, Descriptors.PooledMemoryEscapes,
        Descriptors.ReleaseSkippedByException, Descriptors.MovingViewAcrossAwait);

    /// <inheritdoc />
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(start =>
        {
            var known = new KnownSymbols(start.Compilation);
            if (!known.Any) return;
            var heapStores = new HeapStores();
            var fates = new ArgumentFates(known, heapStores);
            start.RegisterOperationBlockAction(block => AnalyzeBlock(block, known, heapStores, fates));
            start.RegisterOperationAction(op => AnalyzeDropped(op, known), OperationKind.ExpressionStatement);
            start.RegisterOperationAction(op => AnalyzeFieldStore(op, known), OperationKind.SimpleAssignment);
        });
    }

    private static void AnalyzeBlock(OperationBlockAnalysisContext context, KnownSymbols known, HeapStores heapStores, ArgumentFates fates)
    {
        foreach (IOperation block in context.OperationBlocks)
        {
            // One walk over the block: the checks that need no flow (a default handle where it is written, a heap handed
            // to a keeper), and whether the flow analysis or the view rule has anything to look at. An operation action
            // per invocation, property and argument instead costs a callback for each of the most frequent operations.
            bool flow = false, views = false, memory = false;
            foreach (IOperation op in block.Descendants())
            {
                switch (op)
                {
                    case IInvocationOperation inv:
                        flow |= !flow && Matters(inv, known);
                        views |= !views && MovingViews.IsMove(inv, known);
                        memory |= !memory && PooledMemory.HandsOutMemory(inv, known);
                        if (known.RecordRef is not null) AnalyzeDefaultReceiver(context, op, known);
                        break;
                    case IPropertyReferenceOperation p:
                        views |= !views && known.IsMovingViewSource(p);
                        memory |= !memory && PooledMemory.HandsOutMemory(p, known);
                        if (known.RecordRef is not null) AnalyzeDefaultReceiver(context, op, known);
                        break;
                    case IArgumentOperation argument when known.TypeThreadHeap is not null:
                        AnalyzeHeapArgument(context, argument, known, heapStores);
                        break;
                    case IObjectCreationOperation creation when known.IsOwnedDisposable(creation.Type) || known.IsPooledWriter(creation.Type):
                    case IParameterReferenceOperation pr when known.IsThreadHeap(pr.Type):
                    case IDefaultValueOperation d when known.IsRecordHandle(d.Type):
                    case IObjectCreationOperation { Arguments.Length: 0 } c when known.IsRecordHandle(c.Type):
                        flow = true;
                        break;
                }
            }
            if (views)
            {
                MovingViews.Analyze(block, known, context.ReportDiagnostic);
                ViewsAcrossAwait.Analyze(block, known, context.ReportDiagnostic);
            }
            if (memory) PooledMemory.Analyze(block, known, context.ReportDiagnostic);
            // A method's body (or a constructor's, an accessor's): the blocks a graph is built for.
            if (!flow || block is not (IMethodBodyOperation or IConstructorBodyOperation or IBlockOperation)) continue;
            ControlFlowGraph cfg = context.GetControlFlowGraph(block);
            ImmutableArray<IParameterSymbol> parameters = context.OwningSymbol is IMethodSymbol m ? m.Parameters : ImmutableArray<IParameterSymbol>.Empty;
            var nested = new HashSet<SyntaxNode>();
            foreach (IOperation op in block.Descendants())
                if (op is IAnonymousFunctionOperation or ILocalFunctionOperation && MayMatter(op, known))
                    nested.Add(op.Syntax);
            MethodAnalysis.Analyze(cfg, parameters, known, fates, context.ReportDiagnostic, nested);
        }
    }

    private static bool Matters(IInvocationOperation inv, KnownSymbols known) =>
        known.Creation(inv) != ResourceKind.None || known.Release(inv, out _) is not null || known.IsThreadHeap(inv.TargetMethod.ReturnType);

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
                case IObjectCreationOperation creation when known.IsOwnedDisposable(creation.Type) || known.IsPooledWriter(creation.Type):
                    return true;
                case IParameterReferenceOperation p when known.IsThreadHeap(p.Type):
                    return true;
                case IDefaultValueOperation d when known.IsRecordHandle(d.Type):
                    return true;
                case IObjectCreationOperation { Arguments.Length: 0 } c when known.IsRecordHandle(c.Type):
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
        (DiagnosticDescriptor? rule, LocalizableString? why) = kind switch
        {
            ResourceKind.Scope => (Descriptors.ScopeOrDisposableDropped, Descriptors.Text("Analyzer01")),
            ResourceKind.Disposable => (Descriptors.ScopeOrDisposableDropped, Descriptors.Text("Analyzer02")),
            ResourceKind.PooledArray => (Descriptors.RentedNotReturned, Descriptors.Text("Analyzer03")),
            ResourceKind.BufferOwner => (Descriptors.BufferOwnerMisuse, Descriptors.Text("Analyzer04")),
            _ => (null, null),
        };
        if (rule is not null) context.ReportDiagnostic(Diagnostic.Create(rule, value.Syntax.GetLocation(), text, why));
    }

    /// <summary><c>default(OrderRef).Price</c>, <c>new OrderRef().Delete(allocator)</c>, <c>allocator.DeleteRef(default)</c>:
    /// a handle that names no record, used where it is written.</summary>
    private static void AnalyzeDefaultReceiver(OperationBlockAnalysisContext context, IOperation operation, KnownSymbols known)
    {
        IOperation? handle;
        string how = "used";
        switch (operation)
        {
            case IPropertyReferenceOperation p when p.Instance is not null && !KnownSymbols.ReadsNoRecord(p.Property.Name):
                handle = p.Instance;
                break;
            case IInvocationOperation i when known.DeletesHandleArgument(i.TargetMethod) && i.Arguments.Length == 1:
                handle = i.Arguments[0].Value;
                how = "deleted";
                break;
            case IInvocationOperation i when i.Instance is not null && !KnownSymbols.ReadsNoRecord(i.TargetMethod.Name):
                handle = i.Instance;
                if (i.TargetMethod.Name == "Delete") how = "deleted";
                break;
            default:
                return;
        }
        handle = Flow.StripConversions(handle);
        bool isDefault = handle switch
        {
            IDefaultValueOperation d => known.IsRecordHandle(d.Type),
            IObjectCreationOperation { Arguments.Length: 0, Initializer: null } c => known.IsRecordHandle(c.Type),
            _ => false,
        };
        if (!isDefault) return;
        context.ReportDiagnostic(Diagnostic.Create(Descriptors.DefaultHandleUsed, handle.Syntax.GetLocation(), handle.Syntax.ToString(),
            Descriptors.Text("Analyzer05", how)));
    }

    /// <summary>A held heap passed to a method or constructor of this compilation that keeps the parameter in a field or
    /// property: the object (or the type) then carries the heap to whichever thread uses it next.</summary>
    private static void AnalyzeHeapArgument(OperationBlockAnalysisContext context, IArgumentOperation argument, KnownSymbols known, HeapStores stores)
    {
        if (argument.Parameter is not { } parameter || !known.IsThreadHeap(parameter.Type) || parameter.RefKind != RefKind.None) return;
        IOperation value = Flow.StripConversions(argument.Value);
        if (Flow.IsNullConstant(value) || argument.IsImplicit) return;
        if (parameter.ContainingSymbol is not IMethodSymbol callee || !stores.Keeps(callee, parameter, out string? member)) return;
        string name = value switch
        {
            ILocalReferenceOperation l => l.Local.Name,
            IParameterReferenceOperation p => p.Parameter.Name,
            IFieldReferenceOperation f => f.Field.Name,
            _ => value.Syntax.ToString(),
        };
        string target = callee.MethodKind == MethodKind.Constructor ? callee.ContainingType.Name + "'s constructor" : "'" + callee.Name + "'";
        context.ReportDiagnostic(Diagnostic.Create(Descriptors.ThreadAffineEscapes, argument.Syntax.GetLocation(), name,
            Descriptors.Text("Analyzer06", target, member)));
    }

    /// <summary>A held heap stored in a field outlives the thread that took it (a [ThreadStatic] field is the thread's own).</summary>
    private static void AnalyzeFieldStore(OperationAnalysisContext context, KnownSymbols known)
    {
        var assignment = (ISimpleAssignmentOperation)context.Operation;
        ISymbol? member = assignment.Target switch
        {
            IFieldReferenceOperation f => f.Field,
            IPropertyReferenceOperation { Arguments.Length: 0 } p => p.Property,
            _ => null,
        };
        if (member is null || !known.IsThreadHeap(member is IFieldSymbol fs ? fs.Type : ((IPropertySymbol)member).Type)) return;
        if (Flow.IsNullConstant(assignment.Value)) return;
        if (HeapStores.IsThreadStatic(member)) return;
        context.ReportDiagnostic(Diagnostic.Create(Descriptors.ThreadAffineEscapes, assignment.Syntax.GetLocation(), member.Name,
            Descriptors.Text("Analyzer07")));
    }
}
