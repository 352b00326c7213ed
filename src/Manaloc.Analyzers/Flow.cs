namespace Manaloc.Analyzers;

/// <summary>
/// The abstract value of a tracked variable: a set of what it may hold at a point, merged (or-ed) where paths join.
/// A rule reports only on what holds on every path into a point (a single bit), or, for a leak, on a set that cannot
/// come from an unrelated condition; anything else stays silent.
/// </summary>
internal static class Bits
{
    /// <summary>Holds nothing of ours: not assigned yet, null, or assigned something that is not a resource.</summary>
    public const byte Unset = 1;
    /// <summary>Holds a resource this method created and has not released.</summary>
    public const byte Live = 2;
    /// <summary>Holds a resource already released (returned, disposed, deleted; for a held heap: an await passed).</summary>
    public const byte Released = 4;
    /// <summary>Ownership left the method, or the value is unknown: no rule may report.</summary>
    public const byte Escaped = 8;
    /// <summary>A default handle (MNL108) that was default on some paths only when a condition was tested since.</summary>
    public const byte Conditioned = 16;
}

/// <summary>Small helpers over IOperation shared by the rules.</summary>
internal static class Flow
{
    public static IOperation StripConversions(IOperation op)
    {
        while (op is IConversionOperation c) op = c.Operand;
        return op;
    }

    /// <summary>The parent, skipping conversions.</summary>
    public static IOperation? Context(IOperation op, out IOperation child)
    {
        child = op;
        IOperation? p = op.Parent;
        while (p is IConversionOperation) { child = p; p = p.Parent; }
        return p;
    }

    public static bool IsNullConstant(IOperation op)
    {
        op = StripConversions(op);
        if (op is IDefaultValueOperation) return true;
        return op.ConstantValue.HasValue && op.ConstantValue.Value is null;
    }

    public static IEnumerable<IOperation> PostOrder(IOperation root)
    {
        // Children before parents: the order in which the operations of one CFG statement run.
        var stack = new Stack<(IOperation Op, bool Expanded)>();
        stack.Push((root, false));
        while (stack.Count > 0)
        {
            (IOperation op, bool expanded) = stack.Pop();
            if (expanded) { yield return op; continue; }
            stack.Push((op, true));
            if (op is IAnonymousFunctionOperation or IFlowAnonymousFunctionOperation or ILocalFunctionOperation) continue;
            var children = new List<IOperation>();
            foreach (IOperation c in op.ChildOperations) children.Add(c);
            for (int i = children.Count - 1; i >= 0; i--) stack.Push((children[i], false));
        }
    }

    public static IEnumerable<IOperation> BlockOperations(BasicBlock block)
    {
        foreach (IOperation op in block.Operations) yield return op;
        if (block.BranchValue is not null) yield return block.BranchValue;
    }

    public static bool InHandler(BasicBlock block)
    {
        for (ControlFlowRegion? r = block.EnclosingRegion; r is not null; r = r.EnclosingRegion)
            if (r.Kind is ControlFlowRegionKind.Finally or ControlFlowRegionKind.Catch or ControlFlowRegionKind.Filter) return true;
        return false;
    }

    public static ImmutableArray<ISymbol> DeclaredLocals(ControlFlowGraph cfg)
    {
        var all = ImmutableArray.CreateBuilder<ISymbol>();
        var stack = new Stack<ControlFlowRegion>();
        stack.Push(cfg.Root);
        while (stack.Count > 0)
        {
            ControlFlowRegion r = stack.Pop();
            foreach (ILocalSymbol l in r.Locals) all.Add(l);
            foreach (ControlFlowRegion n in r.NestedRegions) stack.Push(n);
        }
        return all.ToImmutable();
    }
}
