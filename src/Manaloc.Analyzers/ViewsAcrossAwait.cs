using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace Manaloc.Analyzers;

/// <summary>
/// MNL112: a RecordArray's own moving view (a <c>MoveTo</c> result, <c>View</c>, the item of a <c>foreach</c> over
/// <c>Scan()</c>) positioned before an <c>await</c> and read after it. The array's own view is per thread, so concurrent
/// code that moves it is right; but the continuation after an <c>await</c> may run on another thread, and the view it holds
/// is still the first thread's, which that thread moves to whatever it reads next. Reported at the first read after the
/// await: the local is positioned before a statement of a block (or a switch section) that awaits on every path through
/// it (no condition, loop, try or lambda of the statement around the await), and a later statement of that block reads
/// it with no write or second move between. A scan whose body awaits and goes on, with no read of the item after the
/// await, is reported at the await: the loop's next move runs on the continuation's thread, on the first thread's view.
/// Left alone: a view of the caller's own (<c>CreateView()</c>: no other thread moves it), the indexer's item, a view
/// positioned after the await, a read the same statement as the await, a read in a lambda that outlives the statement (MNL109
/// reports the capture), and a read after a second move of the same array (MNL109 reports it).
/// </summary>
internal static class ViewsAcrossAwait
{
    /// <summary>A local assigned a RecordArray's own view: the array it views, the foreach over its Scan() for an item, and
    /// its assignments. Followed only while every assignment is a view of that array (or null).</summary>
    private sealed class ArrayView(ISymbol? array, IForEachLoopOperation? loop)
    {
        public readonly ISymbol? Array = array;
        public readonly IForEachLoopOperation? Loop = loop;
        public readonly List<IOperation> Writes = [];
        public bool OnlyViews = array is not null;
    }

    public static void Analyze(IOperation root, KnownSymbols known, Action<Diagnostic> report)
    {
        Dictionary<ILocalSymbol, ArrayView> locals = Collect(root, known);
        bool any = false;
        foreach (ArrayView v in locals.Values) any |= v.OnlyViews;
        if (!any) return;
        var reported = new HashSet<int>();
        void Report(IOperation at, ILocalSymbol local, LocalizableString why)
        {
            if (reported.Add(at.Syntax.SpanStart))
                report(Diagnostic.Create(Descriptors.MovingViewAcrossAwait, at.Syntax.GetLocation(), local.Name, why));
        }
        foreach (IOperation op in root.DescendantsAndSelf())
        {
            // The statement lists: a block's, a switch section's (whose statements run in order too).
            ImmutableArray<IOperation> ops;
            if (op is IBlockOperation b) ops = b.Operations;
            else if (op is ISwitchCaseOperation section) ops = section.Body;
            else continue;
            IOperation block = op;
            for (int j = 0; j < ops.Length; j++)
            {
                if (AwaitOnEveryPath(ops[j]) is not { } awaited) continue;
                foreach (KeyValuePair<ILocalSymbol, ArrayView> entry in locals)
                {
                    if (!entry.Value.OnlyViews || !PositionedBefore(entry.Value, block, ops[j], root)) continue;
                    if (MovingViews.Writes(ops[j], entry.Key)) continue;
                    IOperation? at = null;
                    for (int k = j + 1; k < ops.Length && at is null; k++)
                    {
                        if (MovingViews.MovesUnconditionally(ops[k], entry.Value.Array!, known, out _) || MovingViews.Writes(ops[k], entry.Key)) break;
                        at = FirstRead(ops[k], entry.Key, known);
                    }
                    if (at is not null)
                        Report(at, entry.Key, Descriptors.Text("Await37", entry.Value.Array!.Name, awaited.Syntax.ToString()));
                    // Unread after the await, the item still goes on: the loop's next move runs where the continuation runs.
                    else if (entry.Value.Loop?.Body == block && !LeavesAfter(ops, j))
                        Report(awaited, entry.Key, Descriptors.Text("Await38", entry.Value.Array!.Name, awaited.Syntax.ToString()));
                }
            }
        }
    }

    /// <summary>A statement after the await leaves the loop on every path: return, break, throw, goto.</summary>
    private static bool LeavesAfter(ImmutableArray<IOperation> ops, int j)
    {
        for (int k = j + 1; k < ops.Length; k++)
            if (ops[k] is IBranchOperation { BranchKind: BranchKind.Break or BranchKind.GoTo } or IReturnOperation or IThrowOperation
                or IExpressionStatementOperation { Operation: IThrowOperation })
                return true;
        return false;
    }

    /// <summary>The locals assigned only the array's own view: <c>array.MoveTo(i)</c>, <c>array.View</c>, the item of
    /// <c>foreach (var r in array.Scan())</c>, over a field, a property, a local or a parameter of RecordArray type.</summary>
    private static Dictionary<ILocalSymbol, ArrayView> Collect(IOperation root, KnownSymbols known)
    {
        var locals = new Dictionary<ILocalSymbol, ArrayView>(SymbolEqualityComparer.Default);
        foreach (IOperation op in root.Descendants())
        {
            switch (op)
            {
                case IForEachLoopOperation { IsAsynchronous: false } loop when Flow.StripConversions(loop.Collection) is IInvocationOperation { TargetMethod.Name: "Scan", Instance: { } scanned }
                                                                            && KnownSymbols.Is(scanned.Type, known.RecordArray) && ArrayOf(scanned) is { } array:
                    if (loop.Locals.Length == 1) locals[loop.Locals[0]] = new ArrayView(array, loop);
                    break;
                case IVariableDeclaratorOperation { Initializer.Value: { } init } declarator:
                    Assigned(declarator.Symbol, init, declarator, known, locals);
                    break;
                case ISimpleAssignmentOperation { Target: ILocalReferenceOperation target } assignment:
                    Assigned(target.Local, assignment.Value, assignment, known, locals);
                    break;
                case ILocalReferenceOperation { Parent: IArgumentOperation { Parameter.RefKind: RefKind.Out or RefKind.Ref } } byRef:
                    Assigned(byRef.Local, byRef, byRef, known, locals);
                    break;
            }
        }
        return locals;
    }

    private static void Assigned(ILocalSymbol local, IOperation value, IOperation write, KnownSymbols known, Dictionary<ILocalSymbol, ArrayView> locals)
    {
        if (Flow.IsNullConstant(value)) return;
        ISymbol? array = Flow.StripConversions(value) switch
        {
            IInvocationOperation { TargetMethod.Name: "MoveTo", Instance: { } i } when KnownSymbols.Is(i.Type, known.RecordArray) => ArrayOf(i),
            IPropertyReferenceOperation { Property.Name: "View", Instance: { } i } when KnownSymbols.Is(i.Type, known.RecordArray) => ArrayOf(i),
            _ => null,
        };
        if (!locals.TryGetValue(local, out ArrayView? v)) locals[local] = v = new ArrayView(array, null);
        else if (array is null || !SymbolEqualityComparer.Default.Equals(array, v.Array)) v.OnlyViews = false;
        v.Writes.Add(write);
    }

    private static ISymbol? ArrayOf(IOperation receiver) => Flow.StripConversions(receiver) switch
    {
        ILocalReferenceOperation l => l.Local,
        IParameterReferenceOperation p => p.Parameter,
        IFieldReferenceOperation { Instance: null or IInstanceReferenceOperation } f => f.Field,
        IPropertyReferenceOperation { Instance: null or IInstanceReferenceOperation, Arguments.Length: 0 } p => p.Property,
        _ => null,
    };

    /// <summary>An await of the statement that runs on every path through it and in the statement's own function: none of
    /// the statement's conditions, loops, try blocks, lambdas or local functions stands between it and the statement.</summary>
    private static IAwaitOperation? AwaitOnEveryPath(IOperation statement)
    {
        foreach (IOperation o in statement.DescendantsAndSelf())
        {
            if (o is not IAwaitOperation awaited) continue;
            for (IOperation? p = awaited.Parent; p is not null && p != statement.Parent; p = p.Parent)
                if (p is IConditionalOperation or ICoalesceOperation or IConditionalAccessOperation or ILoopOperation or ISwitchOperation
                    or ISwitchExpressionOperation or IAnonymousFunctionOperation or ILocalFunctionOperation or ITryOperation
                    || (p is IBinaryOperation { OperatorKind: BinaryOperatorKind.ConditionalAnd or BinaryOperatorKind.ConditionalOr }))
                    goto next;
            return awaited;
            next:;
        }
        return null;
    }

    /// <summary>The local holds a view when the statement starts: the block is inside the foreach that positions an item, or
    /// the local is assigned a view before the statement, in the block's own function.</summary>
    private static bool PositionedBefore(ArrayView view, IOperation block, IOperation statement, IOperation root)
    {
        if (view.Loop is { } loop)
            return loop.Body.Syntax.Span.Contains(block.Syntax.Span) && Function(loop, root) == Function(block, root);
        foreach (IOperation write in view.Writes)
            if (write.Syntax.Span.End <= statement.Syntax.SpanStart && Function(write, root) == Function(block, root))
                return true;
        return false;
    }

    /// <summary>The first read of the local in the statement, unless it sits in a lambda that outlives the statement (MNL109's)
    /// or in a local function (which runs where it is called).</summary>
    private static IOperation? FirstRead(IOperation statement, ILocalSymbol local, KnownSymbols known)
    {
        foreach (IOperation o in statement.DescendantsAndSelf())
        {
            if (o is not ILocalReferenceOperation read || !SymbolEqualityComparer.Default.Equals(read.Local, local)
                || (read.Parent is ISimpleAssignmentOperation a && a.Target == read)) continue;
            for (IOperation? p = read.Parent; p is not null && p != statement.Parent; p = p.Parent)
                if (p is ILocalFunctionOperation || (p is IAnonymousFunctionOperation lambda && MovingViews.Outlives(lambda, known)))
                    goto next;
            return read;
            next:;
        }
        return null;
    }

    /// <summary>The lambda or local function the operation runs in, or null for the analyzed body itself.</summary>
    private static IOperation? Function(IOperation op, IOperation root)
    {
        for (IOperation? p = op.Parent; p is not null && p != root; p = p.Parent)
            if (p is IAnonymousFunctionOperation or ILocalFunctionOperation) return p;
        return null;
    }
}
