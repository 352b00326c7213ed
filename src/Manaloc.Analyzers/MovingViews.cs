using System;
using System.Collections.Generic;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace Manaloc.Analyzers;

/// <summary>
/// MNL109: a moving record view (<c>RecordArray.View</c>, <c>RecordView.Value</c>, a <c>MoveTo</c> result, the item of a
/// <c>foreach</c> over <c>Scan()</c>) kept beyond the move that positioned it. The view is one object for every record,
/// so whatever keeps it shows another record after the next move. Reported: stored in a field, a property or an array
/// element; added to a collection; returned from a variable; assigned inside a loop to a variable declared outside it
/// and read after (the loop moves on); captured by a lambda that outlives the statement (stored, returned, async, run on
/// another thread). Left alone: a view read, written or passed to a method where it is positioned; a method whose
/// whole result is the view (<c>=&gt; _array.MoveTo(i)</c>, forwarding it by design); a find loop that keeps the item and
/// leaves the loop at once (<c>found = r; break;</c>).
/// </summary>
internal static class MovingViews
{
    private sealed class ViewLocal
    {
        /// <summary>Every value assigned to it is a moving view (or null); one that may hold an item too is not followed.</summary>
        public bool OnlyViews = true;
        /// <summary>The loop that moves the view it holds (the foreach over Scan() for its item), when known.</summary>
        public ILoopOperation? MovedBy;
    }

    public static void Analyze(IOperation root, KnownSymbols known, Action<Diagnostic> report)
    {
        var locals = new Dictionary<ILocalSymbol, ViewLocal>(SymbolEqualityComparer.Default);
        CollectLocals(root, known, locals);
        var reported = new HashSet<int>();
        void Report(IOperation at, string name, LocalizableString what)
        {
            if (reported.Add(at.Syntax.SpanStart))
                report(Diagnostic.Create(Descriptors.MovingViewKept, at.Syntax.GetLocation(), name, what));
        }

        foreach (IOperation op in root.DescendantsAndSelf())
        {
            switch (op)
            {
                case ISimpleAssignmentOperation assignment when IsView(assignment.Value, known, locals, out string name):
                    switch (assignment.Target)
                    {
                        case IFieldReferenceOperation or IArrayElementReferenceOperation or IPropertyReferenceOperation:
                            Report(assignment, name, Descriptors.Text("View26", TargetName(assignment.Target)));
                            break;
                        case ILocalReferenceOperation outer when KeptPastTheLoop(assignment, outer.Local, root, known, locals):
                            Report(assignment, outer.Local.Name, Descriptors.Text("View27", name));
                            break;
                    }
                    break;
                case IArgumentOperation argument when argument.Parent is IInvocationOperation invocation && known.AddsToCollection(invocation.TargetMethod)
                                                     && IsView(argument.Value, known, locals, out string added):
                    Report(argument, added, Descriptors.Text("View28"));
                    break;
                case IReturnOperation { Kind: OperationKind.Return, ReturnedValue: { } returned }
                    when Flow.StripConversions(returned) is ILocalReferenceOperation l && locals.TryGetValue(l.Local, out ViewLocal? v) && v.OnlyViews:
                    Report(returned, l.Local.Name, Descriptors.Text("View29"));
                    break;
                case IBlockOperation block when locals.Count > 0:
                    MovedAgain(block, known, locals, Report);
                    break;
                case IAnonymousFunctionOperation lambda when Outlives(lambda, known):
                    foreach (IOperation inner in lambda.Body.Descendants())
                        if (inner is ILocalReferenceOperation captured && locals.TryGetValue(captured.Local, out ViewLocal? cv) && cv.OnlyViews
                            && !lambda.Syntax.Span.Contains(captured.Local.DeclaringSyntaxReferences.Length > 0 ? captured.Local.DeclaringSyntaxReferences[0].Span : default))
                            Report(inner, captured.Local.Name, Descriptors.Text("View30"));
                    break;
            }
        }
    }

    /// <summary>
    /// In one block: <c>var a = array.MoveTo(0);</c>, later a statement that moves the same view on every path through it
    /// (<c>array.MoveTo(1)</c>, a <c>foreach</c> over <c>array.Scan()</c>), later a read of <c>a</c>, which now shows the
    /// other record. Statements of a block run in order, so the read follows the move on every path that reaches it.
    /// </summary>
    private static void MovedAgain(IBlockOperation block, KnownSymbols known, Dictionary<ILocalSymbol, ViewLocal> locals, Action<IOperation, string, LocalizableString> report)
    {
        var ops = block.Operations;
        for (int i = 0; i < ops.Length; i++)
        {
            if (!PositionsLocal(ops[i], known, out ILocalSymbol? local, out ISymbol? owner) || !locals.TryGetValue(local!, out ViewLocal? v) || !v.OnlyViews) continue;
            for (int j = i + 1; j < ops.Length; j++)
            {
                if (Writes(ops[j], local!)) break;
                if (!MovesUnconditionally(ops[j], owner!, known, out string? how)) continue;
                for (int k = j + 1; k < ops.Length; k++)
                {
                    foreach (IOperation o in ops[k].DescendantsAndSelf())
                        if (o is ILocalReferenceOperation read && SymbolEqualityComparer.Default.Equals(read.Local, local)
                            && !(read.Parent is ISimpleAssignmentOperation a && a.Target == read))
                        {
                            report(read, local!.Name, Descriptors.Text("View31", how));
                            return;
                        }
                    if (Writes(ops[k], local!)) return;
                }
                break;
            }
        }
    }

    /// <summary><c>var a = x.MoveTo(i);</c>, <c>a = x.View;</c>: the local and the array or view whose move it follows.</summary>
    private static bool PositionsLocal(IOperation statement, KnownSymbols known, out ILocalSymbol? local, out ISymbol? owner)
    {
        local = null; owner = null;
        IOperation? value = null;
        if (statement is IVariableDeclarationGroupOperation { Declarations.Length: 1 } group && group.Declarations[0].Declarators.Length == 1
            && group.Declarations[0].Declarators[0] is { Initializer.Value: { } init } declarator)
        {
            local = declarator.Symbol;
            value = init;
        }
        else if (statement is IExpressionStatementOperation { Operation: ISimpleAssignmentOperation { Target: ILocalReferenceOperation target } assignment })
        {
            local = target.Local;
            value = assignment.Value;
        }
        if (value is null || !known.IsMovingViewSource(value = Flow.StripConversions(value))) return false;
        IOperation? receiver = value switch
        {
            IPropertyReferenceOperation p => p.Instance,
            IInvocationOperation m => m.Instance,
            _ => null,
        };
        owner = receiver is null ? null : SymbolOf(Flow.StripConversions(receiver));
        return owner is not null;
    }

    /// <summary>The statement moves the view of <paramref name="owner"/> on every path through it: a MoveTo outside any
    /// condition, loop or lambda of the statement, or a foreach over its Scan() (the loop moves it once it has a record).</summary>
    internal static bool MovesUnconditionally(IOperation statement, ISymbol owner, KnownSymbols known, out string? how)
    {
        how = null;
        if (statement is IForEachLoopOperation loop && Flow.StripConversions(loop.Collection) is IInvocationOperation { TargetMethod.Name: "Scan", Instance: { } scanned }
            && SymbolEqualityComparer.Default.Equals(SymbolOf(Flow.StripConversions(scanned)), owner))
        {
            how = "the scan over '" + owner.Name + "'";
            return true;
        }
        foreach (IOperation o in statement.DescendantsAndSelf())
        {
            if (o is not IInvocationOperation { TargetMethod.Name: "MoveTo", Instance: { } moved } move || !known.IsMovingViewSource(move)
                || !SymbolEqualityComparer.Default.Equals(SymbolOf(Flow.StripConversions(moved)), owner)) continue;
            for (IOperation? p = move.Parent; p is not null && p != statement.Parent; p = p.Parent)
                if (p is IConditionalOperation or ICoalesceOperation or IConditionalAccessOperation or ILoopOperation or ISwitchOperation
                    or ISwitchExpressionOperation or IAnonymousFunctionOperation or ILocalFunctionOperation or ITryOperation
                    || (p is IBinaryOperation { OperatorKind: BinaryOperatorKind.ConditionalAnd or BinaryOperatorKind.ConditionalOr }))
                    goto next;
            how = "'" + move.Syntax + "'";
            return true;
            next:;
        }
        return false;
    }

    internal static bool Writes(IOperation statement, ILocalSymbol local)
    {
        foreach (IOperation o in statement.DescendantsAndSelf())
            if (o is ILocalReferenceOperation l && SymbolEqualityComparer.Default.Equals(l.Local, local)
                && ((l.Parent is ISimpleAssignmentOperation a && a.Target == l) || l.Parent is IArgumentOperation { Parameter.RefKind: RefKind.Out or RefKind.Ref }))
                return true;
        return false;
    }

    private static ISymbol? SymbolOf(IOperation op) => op switch
    {
        ILocalReferenceOperation l => l.Local,
        IParameterReferenceOperation p => p.Parameter,
        IFieldReferenceOperation { Instance: null or IInstanceReferenceOperation } f => f.Field,
        _ => null,
    };

    /// <summary>The cheap filter, applied by the caller's walk: a View, Value, MoveTo or Scan of a record array or view.</summary>
    public static bool IsMove(IInvocationOperation invocation, KnownSymbols known) =>
        known.IsMovingViewSource(invocation) || (invocation.TargetMethod.Name == "Scan" && KnownSymbols.Is(invocation.Type, known.ScanEnumerator));

    private static void CollectLocals(IOperation root, KnownSymbols known, Dictionary<ILocalSymbol, ViewLocal> locals)
    {
        // Twice: a local assigned from another view local is seen once the first is known.
        for (int pass = 0; pass < 2; pass++)
            foreach (IOperation op in root.Descendants())
            {
                switch (op)
                {
                    case IForEachLoopOperation loop when Flow.StripConversions(loop.Collection) is IInvocationOperation { TargetMethod.Name: "Scan" } scan
                                                         && KnownSymbols.Is(scan.Type, known.ScanEnumerator):
                        foreach (ILocalSymbol item in loop.Locals)
                            if (!locals.ContainsKey(item)) locals[item] = new ViewLocal { MovedBy = loop };
                        break;
                    case IVariableDeclaratorOperation { Initializer.Value: { } init } declarator:
                        Assigned(declarator.Symbol, init, Enclosing(op), known, locals);
                        break;
                    case ISimpleAssignmentOperation { Target: ILocalReferenceOperation target } assignment:
                        Assigned(target.Local, assignment.Value, Enclosing(op), known, locals);
                        break;
                }
            }
    }

    private static void Assigned(ILocalSymbol local, IOperation value, ILoopOperation? loop, KnownSymbols known, Dictionary<ILocalSymbol, ViewLocal> locals)
    {
        if (Flow.IsNullConstant(value)) return;
        bool view = IsView(value, known, locals, out _);
        if (!locals.TryGetValue(local, out ViewLocal? v))
        {
            if (!view) return;
            locals[local] = v = new ViewLocal();
        }
        if (!view) v.OnlyViews = false;
        else v.MovedBy ??= loop;
    }

    private static bool IsView(IOperation value, KnownSymbols known, Dictionary<ILocalSymbol, ViewLocal> locals, out string name)
    {
        value = Flow.StripConversions(value);
        switch (value)
        {
            case ILocalReferenceOperation l when locals.TryGetValue(l.Local, out ViewLocal? v) && v.OnlyViews:
                name = l.Local.Name;
                return true;
            case IConditionalOperation c when c.WhenFalse is not null:
                return IsView(c.WhenTrue, known, locals, out name) || IsView(c.WhenFalse, known, locals, out name);
            case ICoalesceOperation c:
                return IsView(c.Value, known, locals, out name) || IsView(c.WhenNull, known, locals, out name);
            default:
                name = value.Syntax.ToString();
                return known.IsMovingViewSource(value);
        }
    }

    /// <summary>Assigned inside a loop that moves the view, to a local declared outside it and read somewhere, and the loop
    /// does not stop right after (<c>found = r; break;</c> keeps the view where the loop left it).</summary>
    private static bool KeptPastTheLoop(ISimpleAssignmentOperation assignment, ILocalSymbol target, IOperation root, KnownSymbols known, Dictionary<ILocalSymbol, ViewLocal> locals)
    {
        ILoopOperation? loop = IsView(assignment.Value, known, locals, out _) && Flow.StripConversions(assignment.Value) is ILocalReferenceOperation source
                               && locals[source.Local].MovedBy is { } movedBy ? movedBy : Enclosing(assignment);
        if (loop is null || target.DeclaringSyntaxReferences.Length == 0) return false;
        if (loop.Syntax.Span.Contains(target.DeclaringSyntaxReferences[0].Span)) return false;
        if (StopsAfter(assignment)) return false;
        foreach (IOperation op in root.Descendants())
            if (op is ILocalReferenceOperation read && SymbolEqualityComparer.Default.Equals(read.Local, target)
                && !(read.Parent is ISimpleAssignmentOperation a && a.Target == read))
                return true;
        return false;
    }

    /// <summary>The statement after the assignment in its block leaves the loop: break, return, throw, goto.</summary>
    private static bool StopsAfter(IOperation assignment)
    {
        IOperation statement = assignment.Parent is IExpressionStatementOperation s ? s : assignment;
        if (statement.Parent is not IBlockOperation block) return false;
        bool after = false;
        foreach (IOperation o in block.Operations)
        {
            if (after)
                return o is IBranchOperation { BranchKind: BranchKind.Break or BranchKind.GoTo } or IReturnOperation or IThrowOperation
                       || (o is IExpressionStatementOperation { Operation: IThrowOperation });
            if (o == statement) after = true;
        }
        return false;
    }

    private static ILoopOperation? Enclosing(IOperation op)
    {
        for (IOperation? p = op.Parent; p is not null; p = p.Parent)
        {
            if (p is ILoopOperation loop) return loop;
            if (p is IAnonymousFunctionOperation or ILocalFunctionOperation) return null;
        }
        return null;
    }

    /// <summary>A lambda kept after the statement that made it: stored, returned, handed to a constructor, async, or run on
    /// another thread. One passed straight to a method (LINQ, Assert.Throws, a callback run in place) is left alone.</summary>
    public static bool Outlives(IAnonymousFunctionOperation lambda, KnownSymbols known)
    {
        if (lambda.Symbol.IsAsync) return true;
        IOperation? p = lambda.Parent;
        while (p is IConversionOperation or IDelegateCreationOperation) p = p.Parent;
        return p switch
        {
            IArgumentOperation { Parent: IInvocationOperation invocation } =>
                known.RunsElsewhere(invocation.TargetMethod.ContainingType) || known.AddsToCollection(invocation.TargetMethod),
            IArgumentOperation { Parent: IObjectCreationOperation } => true,
            IReturnOperation => true,
            ISimpleAssignmentOperation { Target: IFieldReferenceOperation or IPropertyReferenceOperation or IArrayElementReferenceOperation } => true,
            _ => false,
        };
    }

    private static string TargetName(IOperation target) => target switch
    {
        IFieldReferenceOperation f => f.Field.Name,
        IPropertyReferenceOperation p => p.Property.IsIndexer ? p.Syntax.ToString() : p.Property.Name,
        _ => target.Syntax.ToString(),
    };
}
