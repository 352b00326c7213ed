namespace Manaloc.Analyzers;

/// <summary>
/// The dataflow over one control flow graph (a method, a lambda or a local function body): per tracked variable, the set
/// of states it may be in (<see cref="Bits"/>), propagated through branches, loops and exception regions to a fixpoint,
/// then one reporting pass over the settled states. A finally region is applied on every edge that runs it (as if
/// inlined, from that edge's own state); a catch or finally region is also entered from every state inside its try.
/// </summary>
internal sealed class MethodAnalysis
{
    private sealed class Var
    {
        public ISymbol Symbol = null!;
        public int Index;
        public ResourceKind Kind;
        public bool Conflict;
        public bool Captured;
        public bool IsParameter;
        public bool HasRelease;
        public bool HasCreation;
        public Location? CreationLocation;
        /// <summary>The size a pooled array was rented with (a copy or an encoding into a buffer sized from its source cannot overflow it).</summary>
        public IOperation? RentSize;
        public readonly List<(IInvocationOperation Op, int Block)> Releases = new();
        public readonly List<(IOperation Op, int Block)> ThrowPoints = new();
        public bool Reported;
        /// <summary>A struct owner (RentedBuffer) this variable was copied from: disposing both disposes one buffer twice.</summary>
        public Var? CopyOf;
        /// <summary>A default handle whose allocation the method tests (IsAllocated, == default): MNL108 trusts the test and stays silent.</summary>
        public bool Tested;
        public bool Tracked => !Conflict && !Captured && Kind != ResourceKind.None;
    }

    private sealed class Run
    {
        public int First, Last;
        public byte[]? Entry;
        public byte[]?[] In = null!, Out = null!, Acc = null!;
    }

    private readonly ControlFlowGraph _cfg;
    private readonly KnownSymbols _known;
    private readonly ArgumentFates _fates;
    private readonly Action<Diagnostic> _report;
    private readonly ImmutableArray<BasicBlock> _blocks;
    private readonly Dictionary<ISymbol, Var> _vars = new(SymbolEqualityComparer.Default);
    /// <summary>Struct record handles assigned default somewhere (MNL108), followed beside the resource the same local may hold.</summary>
    private readonly Dictionary<ISymbol, Var> _defaults = new(SymbolEqualityComparer.Default);
    private readonly List<Var> _list = new();
    private readonly Dictionary<CaptureId, IOperation?> _captures = new();
    private readonly Dictionary<IInvocationOperation, Var> _releaseOf = new();
    private readonly Dictionary<(ControlFlowRegion, string), byte[]?> _finallyMemo = new();
    private readonly HashSet<(string, int)> _reported = new();
    private bool _reporting;

    private MethodAnalysis(ControlFlowGraph cfg, KnownSymbols known, ArgumentFates fates, Action<Diagnostic> report)
    {
        _cfg = cfg;
        _known = known;
        _fates = fates;
        _report = report;
        _blocks = cfg.Blocks;
    }

    /// <summary>Analyzes a graph and, separately, every lambda and local function inside it.</summary>
    /// <param name="nested">The lambdas and local functions (by syntax) that call anything the rules know: only their
    /// graphs are built (a graph per lambda is most of the cost in test code full of Assert.Throws(() => …)).</param>
    public static void Analyze(ControlFlowGraph cfg, ImmutableArray<IParameterSymbol> parameters, KnownSymbols known, ArgumentFates fates, Action<Diagnostic> report, HashSet<SyntaxNode> nested)
    {
        var analysis = new MethodAnalysis(cfg, known, fates, report);
        analysis.Collect(parameters);
        if (analysis.HasWork) analysis.Solve();
        if (nested.Count == 0) return;
        foreach (IMethodSymbol local in cfg.LocalFunctions)
            if (local.DeclaringSyntaxReferences.Length > 0 && nested.Contains(local.DeclaringSyntaxReferences[0].GetSyntax()))
                Analyze(cfg.GetLocalFunctionControlFlowGraph(local), local.Parameters, known, fates, report, nested);
        foreach (BasicBlock block in cfg.Blocks)
            foreach (IOperation root in Flow.BlockOperations(block))
                foreach (IOperation op in Flow.PostOrder(root))
                    if (op is IFlowAnonymousFunctionOperation lambda && nested.Contains(lambda.Syntax))
                        Analyze(cfg.GetAnonymousFunctionControlFlowGraph(lambda), lambda.Symbol.Parameters, known, fates, report, nested);
    }

    private bool HasWork
    {
        get
        {
            foreach (Var v in _list) if (v.Tracked) return true;
            return false;
        }
    }

    // ---------------------------------------------------------------- collection

    private void Collect(ImmutableArray<IParameterSymbol> parameters)
    {
        foreach (ISymbol local in Flow.DeclaredLocals(_cfg)) Add(local, false);
        foreach (IParameterSymbol p in parameters)
            if (p.RefKind == RefKind.None) Add(p, true);

        foreach (BasicBlock block in _blocks)
            foreach (IOperation root in Flow.BlockOperations(block))
                foreach (IOperation op in Flow.PostOrder(root))
                    if (op is IFlowCaptureOperation capture)
                        _captures[capture.Id] = _captures.TryGetValue(capture.Id, out IOperation? seen) && seen != capture.Value ? null : capture.Value;

        foreach (BasicBlock block in _blocks)
            foreach (IOperation root in Flow.BlockOperations(block))
                foreach (IOperation op in Flow.PostOrder(root))
                    CollectOne(op, block);
        // Second: a call of this compilation that returns or disposes its argument releases it (the kinds are known now).
        foreach (BasicBlock block in _blocks)
            foreach (IOperation root in Flow.BlockOperations(block))
                foreach (IOperation op in Flow.PostOrder(root))
                    if (op is IInvocationOperation invocation && !_releaseOf.ContainsKey(invocation))
                        foreach (IArgumentOperation argument in invocation.Arguments)
                            if (VarOf(argument.Value) is { } target && IsLeakKind(target.Kind) && _fates.Of(argument) == ArgumentFate.Releases)
                            {
                                target.HasRelease = true;
                                target.Releases.Add((invocation, block.Ordinal));
                                _releaseOf[invocation] = target;
                                break;
                            }
        if (_defaults.Count > 0)
            foreach (BasicBlock block in _blocks)
                foreach (IOperation root in Flow.BlockOperations(block))
                    foreach (IOperation op in Flow.PostOrder(root))
                        if (op is ILocalReferenceOperation l && _defaults.TryGetValue(l.Local, out Var? dv) && TestsAllocation(op))
                            dv.Tested = true;
        // Captures matter only for a variable the rules follow: otherwise no lambda's graph is built for them.
        if (!HasWork) return;
        foreach (BasicBlock block in _blocks)
            foreach (IOperation root in Flow.BlockOperations(block))
                foreach (IOperation op in Flow.PostOrder(root))
                    if (op is IFlowAnonymousFunctionOperation lambda)
                        MarkCaptured(_cfg.GetAnonymousFunctionControlFlowGraph(lambda), RunsElsewhere(lambda));
        foreach (IMethodSymbol local in _cfg.LocalFunctions)
            MarkCaptured(_cfg.GetLocalFunctionControlFlowGraph(local), local.IsAsync);
    }

    private void Add(ISymbol symbol, bool isParameter)
    {
        if (_vars.ContainsKey(symbol)) return;
        var v = new Var { Symbol = symbol, Index = _list.Count, IsParameter = isParameter };
        ITypeSymbol? type = symbol is ILocalSymbol l ? l.Type : ((IParameterSymbol)symbol).Type;
        if (_known.IsThreadHeap(type)) v.Kind = ResourceKind.ThreadHeap;
        _vars.Add(symbol, v);
        _list.Add(v);
    }

    private void CollectOne(IOperation op, BasicBlock block)
    {
        if (op is ISimpleAssignmentOperation { Target: ILocalReferenceOperation local } assigned
            && IsDefaultHandle(Resolve(assigned.Value)) && !_defaults.ContainsKey(local.Local))
        {
            var dv = new Var { Symbol = local.Local, Index = _list.Count, Kind = ResourceKind.DefaultHandle };
            _defaults.Add(local.Local, dv);
            _list.Add(dv);
        }
        switch (op)
        {
            case ISimpleAssignmentOperation assignment when VarOf(assignment.Target) is { IsParameter: false } target:
            {
                IOperation created = Resolve(assignment.Value);
                ResourceKind kind = _known.Creation(created);
                if (kind == ResourceKind.None) break;
                SetKind(target, kind);
                target.HasCreation = true;
                target.CreationLocation ??= assignment.Syntax.GetLocation();
                if (kind == ResourceKind.PooledArray && created is IInvocationOperation { Arguments.Length: > 0 } rent)
                    target.RentSize = target.RentSize is null ? rent.Arguments[rent.Arguments.Length - 1].Value : null;
                break;
            }
            case IInvocationOperation invocation:
            {
                IOperation? released = _known.Release(invocation, out ResourceKind kind);
                if (released is null || VarOf(released) is not { } target) break;
                SetKind(target, kind);
                target.HasRelease = true;
                target.Releases.Add((invocation, block.Ordinal));
                _releaseOf[invocation] = target;
                break;
            }
        }
        if (op is IFlowCaptureOperation capture && _captures[capture.Id] is null)
        {
            // One capture written on two paths (a ?: or ?? of two variables): which variable it holds is unknown.
            if (VarOf(capture.Value) is { } ambiguous) ambiguous.Conflict = true;
        }
    }

    private void SetKind(Var v, ResourceKind kind)
    {
        if (v.Kind == ResourceKind.None) v.Kind = kind;
        else if (v.Kind != kind) v.Conflict = true;
    }

    /// <summary>A variable a lambda or local function reads is no longer followed (it may run any time): only MNL107 speaks.</summary>
    private void MarkCaptured(ControlFlowGraph inner, bool elsewhere)
    {
        foreach (BasicBlock block in inner.Blocks)
            foreach (IOperation root in Flow.BlockOperations(block))
                foreach (IOperation op in Flow.PostOrder(root))
                {
                    ISymbol? symbol = op switch
                    {
                        ILocalReferenceOperation l => l.Local,
                        IParameterReferenceOperation p => p.Parameter,
                        _ => null,
                    };
                    if (symbol is not null && _defaults.TryGetValue(symbol, out Var? d)) d.Captured = true;
                    if (symbol is not null && _vars.TryGetValue(symbol, out Var? v))
                    {
                        v.Captured = true;
                        if (v.Kind == ResourceKind.ThreadHeap && elsewhere)
                            Report(Descriptors.ThreadAffineEscapes, op, v, Descriptors.Text("Flow08"));
                    }
                    if (op is IFlowAnonymousFunctionOperation nested)
                        MarkCaptured(inner.GetAnonymousFunctionControlFlowGraph(nested), elsewhere || RunsElsewhere(nested));
                }
        foreach (IMethodSymbol local in inner.LocalFunctions)
            MarkCaptured(inner.GetLocalFunctionControlFlowGraph(local), elsewhere || local.IsAsync);
    }

    /// <summary>An async lambda, or one passed to Task.Run, Parallel, the thread pool, a thread or a dispatcher.</summary>
    private bool RunsElsewhere(IFlowAnonymousFunctionOperation lambda)
    {
        if (lambda.Symbol.IsAsync) return true;
        IOperation? p = lambda.Parent;
        while (p is IConversionOperation or IDelegateCreationOperation) p = p.Parent;
        if (p is IArgumentOperation arg) p = arg.Parent;
        return p switch
        {
            IInvocationOperation inv => _known.RunsElsewhere(inv.TargetMethod.ContainingType),
            IObjectCreationOperation creation => _known.RunsElsewhere(creation.Type as INamedTypeSymbol),
            _ => false,
        };
    }

    private IOperation Resolve(IOperation op)
    {
        op = Flow.StripConversions(op);
        for (int guard = 0; guard < 8 && op is IFlowCaptureReferenceOperation reference; guard++)
        {
            if (!_captures.TryGetValue(reference.Id, out IOperation? value) || value is null) return op;
            op = Flow.StripConversions(value);
        }
        return op;
    }

    private Var? VarOf(IOperation op)
    {
        ISymbol? symbol = Resolve(op) switch
        {
            ILocalReferenceOperation l => l.Local,
            IParameterReferenceOperation p => p.Parameter,
            _ => null,
        };
        return symbol is not null && _vars.TryGetValue(symbol, out Var? v) ? v : null;
    }

    // ---------------------------------------------------------------- fixpoint

    private void Solve()
    {
        var initial = new byte[_list.Count];
        foreach (Var v in _list)
            initial[v.Index] = v.IsParameter ? (v.Kind == ResourceKind.ThreadHeap ? Bits.Live : Bits.Escaped) : Bits.Unset;
        var main = new Run { First = 0, Last = _blocks.Length - 1, Entry = initial };
        Solve(main);

        _reporting = true;
        for (int b = main.First; b <= main.Last; b++)
        {
            if (main.In[b] is not { } input) continue;
            Transfer(_blocks[b], input, out _);
            ReportLeaks(main, _blocks[b]);
        }
        // Finally regions were solved per edge; report inside them from their merged entry (already in main.In).
        foreach (Var v in _list)
        {
            if (!v.Tracked || v.ThrowPoints.Count == 0) continue;
            foreach ((IInvocationOperation release, int block) in v.Releases)
            {
                if (Flow.InHandler(_blocks[block])) continue;
                // Only a failure on the way to this release skips it (a call on another branch may have taken the array).
                IOperation? throwing = null;
                foreach ((IOperation op, int from) in v.ThrowPoints)
                    if (Reaches(from, block)) { throwing = op; break; }
                if (throwing is null) continue;
                string what = Describe(throwing);
                switch (v.Kind)
                {
                    case ResourceKind.PooledArray:
                        Report(Descriptors.ReleaseSkippedByException, release, v, Descriptors.Text("Flow09", what));
                        break;
                    case ResourceKind.BufferOwner:
                        Report(Descriptors.ReleaseSkippedByException, release, v, Descriptors.Text("Flow10", what));
                        break;
                    case ResourceKind.Scope:
                        Report(Descriptors.ScopeOrDisposableDropped, release, v, Descriptors.Text("Flow11", what));
                        break;
                }
                break;
            }
        }
    }

    private void Solve(Run run)
    {
        int n = run.Last - run.First + 1;
        run.In = new byte[n + run.First][];
        run.Out = new byte[n + run.First][];
        run.Acc = new byte[n + run.First][];
        bool changed = true;
        for (int round = 0; changed && round < 64; round++)
        {
            changed = false;
            for (int b = run.First; b <= run.Last; b++)
            {
                byte[]? input = Input(run, b);
                if (input is null || (run.In[b] is { } old && Same(old, input))) continue;
                run.In[b] = input;
                run.Out[b] = Transfer(_blocks[b], input, out byte[] acc);
                run.Acc[b] = acc;
                changed = true;
            }
        }
    }

    private byte[]? Input(Run run, int b)
    {
        byte[]? state = b == run.First ? Copy(run.Entry) : null;
        BasicBlock block = _blocks[b];
        foreach (ControlFlowBranch branch in block.Predecessors)
            state = Merge(state, EdgeState(run, branch));
        // A handler (catch, filter, finally) runs from any state inside its try.
        ControlFlowRegion? region = block.EnclosingRegion;
        while (region is not null && region.FirstBlockOrdinal == b)
        {
            if (region.Kind is ControlFlowRegionKind.Catch or ControlFlowRegionKind.Filter or ControlFlowRegionKind.Finally
                && TryOf(region) is { } tryRegion && tryRegion.FirstBlockOrdinal >= run.First && tryRegion.LastBlockOrdinal <= run.Last)
            {
                for (int t = tryRegion.FirstBlockOrdinal; t <= tryRegion.LastBlockOrdinal; t++)
                {
                    state = Merge(state, run.In[t]);
                    state = Merge(state, run.Acc[t]);
                }
            }
            region = region.EnclosingRegion;
        }
        return state;
    }

    private static ControlFlowRegion? TryOf(ControlFlowRegion handler)
    {
        for (ControlFlowRegion? r = handler.EnclosingRegion; r is not null; r = r.EnclosingRegion)
            if (r.Kind is ControlFlowRegionKind.TryAndCatch or ControlFlowRegionKind.TryAndFinally)
                return r.NestedRegions[0];
        return null;
    }

    private byte[]? EdgeState(Run run, ControlFlowBranch branch)
    {
        int source = branch.Source.Ordinal;
        if (source < run.First || source > run.Last || run.Out[source] is not { } outState) return null;
        byte[]? state = Copy(outState)!;
        Refine(state, branch);
        if (_defaults.Count > 0 && branch.Source.ConditionKind != ControlFlowConditionKind.None)
        {
            // Past a condition, a handle that is default on some paths only may be used where the condition proves it is
            // not (a flag set with the assignment): from here MNL108 reports only a handle default on every path.
            foreach (Var d in _defaults.Values)
                if ((state[d.Index] & Bits.Released) != 0 && (state[d.Index] & Bits.Live) != 0) state[d.Index] |= Bits.Conditioned;
        }
        foreach (ControlFlowRegion finallyRegion in branch.FinallyRegions)
        {
            if (state is null) break;
            state = ThroughFinally(finallyRegion, state);
        }
        return state;
    }

    private byte[]? ThroughFinally(ControlFlowRegion region, byte[] state)
    {
        var key = (region, Convert.ToBase64String(state));
        if (_finallyMemo.TryGetValue(key, out byte[]? memo)) return memo;
        _finallyMemo[key] = state; // a cycle through the same finally (cannot happen in C#) reads the entry state
        bool reporting = _reporting;
        _reporting = false;
        var run = new Run { First = region.FirstBlockOrdinal, Last = region.LastBlockOrdinal, Entry = state };
        Solve(run);
        _reporting = reporting;
        byte[]? exit = null;
        for (int b = run.First; b <= run.Last; b++)
            if (_blocks[b].FallThroughSuccessor?.Semantics == ControlFlowBranchSemantics.StructuredExceptionHandling)
                exit = Merge(exit, run.Out[b]);
        _finallyMemo[key] = exit;
        return exit;
    }

    /// <summary>On the branch where a null test proved the variable null, it holds nothing; where non-null, not "nothing".</summary>
    private void Refine(byte[] state, ControlFlowBranch branch)
    {
        BasicBlock source = branch.Source;
        if (source.ConditionKind == ControlFlowConditionKind.None || source.BranchValue is null) return;
        bool valueWhenTaken = branch.IsConditionalSuccessor == (source.ConditionKind == ControlFlowConditionKind.WhenTrue);
        if (!NullTest(source.BranchValue, out Var? v, out bool trueMeansNull, out bool exact) || v is null) return;
        bool isNull = valueWhenTaken == trueMeansNull;
        if (isNull && !exact) return;
        if (isNull) state[v.Index] = Bits.Unset;
        else if ((state[v.Index] & ~Bits.Unset) != 0) state[v.Index] = (byte)(state[v.Index] & ~Bits.Unset);
    }

    private bool NullTest(IOperation op, out Var? v, out bool trueMeansNull, out bool exact)
    {
        op = Resolve(op);
        v = null; trueMeansNull = false; exact = true;
        switch (op)
        {
            case IUnaryOperation { OperatorKind: UnaryOperatorKind.Not } not:
                if (!NullTest(not.Operand, out v, out trueMeansNull, out exact)) return false;
                trueMeansNull = !trueMeansNull;
                return true;
            case IIsNullOperation isNull:
                v = VarOf(isNull.Operand);
                trueMeansNull = true;
                return v is not null;
            case IBinaryOperation { OperatorKind: BinaryOperatorKind.Equals or BinaryOperatorKind.NotEquals } binary:
                if (Flow.IsNullConstant(binary.RightOperand)) v = VarOf(binary.LeftOperand);
                else if (Flow.IsNullConstant(binary.LeftOperand)) v = VarOf(binary.RightOperand);
                trueMeansNull = binary.OperatorKind == BinaryOperatorKind.Equals;
                return v is not null;
            case IIsPatternOperation pattern:
                v = VarOf(pattern.Value);
                if (v is null) return false;
                switch (pattern.Pattern)
                {
                    case IConstantPatternOperation constant when Flow.IsNullConstant(constant.Value):
                        trueMeansNull = true; return true;
                    case INegatedPatternOperation { Pattern: IConstantPatternOperation negated } when Flow.IsNullConstant(negated.Value):
                        trueMeansNull = false; return true;
                    default:
                        // x is T / x is { }: true proves non-null; false proves nothing.
                        trueMeansNull = false; exact = false; return true;
                }
            default:
                return false;
        }
    }

    // ---------------------------------------------------------------- transfer

    private byte[] Transfer(BasicBlock block, byte[] input, out byte[] acc)
    {
        byte[] state = Copy(input)!;
        acc = Copy(input)!;
        foreach (IOperation root in Flow.BlockOperations(block))
            foreach (IOperation op in Flow.PostOrder(root))
            {
                Apply(op, state, block);
                for (int i = 0; i < state.Length; i++) acc[i] |= state[i];
            }
        if (block.FallThroughSuccessor?.Semantics is ControlFlowBranchSemantics.Throw or ControlFlowBranchSemantics.Rethrow)
            ThrowPoint(state, block, block.BranchValue ?? (block.Operations.Length > 0 ? block.Operations[block.Operations.Length - 1] : null));
        return state;
    }

    private void Apply(IOperation op, byte[] state, BasicBlock block)
    {
        if (_defaults.Count > 0) ApplyDefault(op, state);
        switch (op)
        {
            case ISimpleAssignmentOperation assignment when VarOf(assignment.Target) is { Tracked: true } target
                                                            && Flow.StripConversions(assignment.Target) is ILocalReferenceOperation or IParameterReferenceOperation:
                Assign(target, assignment, state);
                break;
            case IInvocationOperation invocation:
                if (_releaseOf.TryGetValue(invocation, out Var? released))
                {
                    if (released.Tracked) Release(released, invocation, state);
                }
                else if (!_known.CannotThrow(invocation) && _known.Creation(invocation) == ResourceKind.None && !IntoSizedBuffer(invocation))
                    ThrowPoint(state, block, invocation);
                break;
            case IObjectCreationOperation creation:
                // A span over the array, a string copied from it, a struct's default (new HashCode()): nothing to throw.
                if (!KnownSymbols.Is(creation.Type, _known.Span) && !KnownSymbols.Is(creation.Type, _known.ReadOnlySpan)
                    && creation.Type?.SpecialType != SpecialType.System_String
                    && !(creation.Type?.IsValueType == true && creation.Arguments.Length == 0 && creation.Constructor?.IsImplicitlyDeclared != false))
                    ThrowPoint(state, block, creation);
                break;
            case IAwaitOperation await:
                ThrowPoint(state, block, await);
                foreach (Var v in _list)
                    if (v.Kind == ResourceKind.ThreadHeap && v.Tracked && (state[v.Index] & Bits.Live) != 0)
                        state[v.Index] = (byte)((state[v.Index] & ~Bits.Live) | Bits.Released);
                break;
            case ILocalReferenceOperation or IParameterReferenceOperation or IFlowCaptureReferenceOperation:
                Reference(op, state);
                break;
        }
    }

    private void Assign(Var v, ISimpleAssignmentOperation assignment, byte[] state)
    {
        IOperation value = Resolve(assignment.Value);
        if (Flow.IsNullConstant(value)) { state[v.Index] = Bits.Unset; return; }
        if (v.Kind == ResourceKind.ThreadHeap) { state[v.Index] = Bits.Live; return; }
        if (v.Kind == ResourceKind.BufferOwner && VarOf(value) is { Kind: ResourceKind.BufferOwner } source && source != v)
        {
            v.CopyOf = source;
            state[v.Index] = Bits.Escaped;
            return;
        }
        if (_known.Creation(value) == v.Kind && !v.IsParameter)
        {
            if (_reporting && IsLeakKind(v.Kind) && state[v.Index] == Bits.Live)
                ReportLeak(v, assignment, "overwritten before");
            state[v.Index] = Bits.Live;
            return;
        }
        state[v.Index] = Bits.Escaped;
    }

    private void Release(Var v, IInvocationOperation invocation, byte[] state)
    {
        if (_reporting && state[v.Index] == Bits.Released)
        {
            switch (v.Kind)
            {
                case ResourceKind.PooledArray: Report(Descriptors.ReturnedTwiceOrUsedAfterReturn, invocation, v, Descriptors.Text("Flow12")); break;
                case ResourceKind.BufferOwner: Report(Descriptors.BufferOwnerMisuse, invocation, v, Descriptors.Text("Flow13")); break;
                case ResourceKind.PooledObject: Report(Descriptors.PooledObjectMisuse, invocation, v, Descriptors.Text("Flow14")); break;
                case ResourceKind.Record: Report(Descriptors.TypedMemoryMisuse, invocation, v, Descriptors.Text("Flow15")); break;
            }
        }
        if (_reporting && v.Kind == ResourceKind.BufferOwner)
        {
            foreach (Var other in _list)
            {
                bool copies = other.CopyOf == v || v.CopyOf == other;
                if (copies && other != v && state[other.Index] == Bits.Released)
                {
                    Report(Descriptors.BufferOwnerMisuse, invocation, v, Descriptors.Text("Flow16", other.Symbol.Name));
                    break;
                }
            }
        }
        state[v.Index] = Bits.Released;
    }

    private void Reference(IOperation leaf, byte[] state)
    {
        Var? v = VarOf(leaf);
        if (v is null || !v.Tracked) return;
        IOperation? context = Flow.Context(leaf, out IOperation child);
        switch (context)
        {
            case ISimpleAssignmentOperation assignment when assignment.Target == child:
                return;
            case IFlowCaptureOperation:
                return; // the use is where the capture is read
            case IArgumentOperation { Parent: IInvocationOperation invocation } when _releaseOf.TryGetValue(invocation, out Var? r) && r == v:
                return;
            case IInvocationOperation invocation when invocation.Instance == child && _releaseOf.TryGetValue(invocation, out Var? r) && r == v:
                return;
            case IIsNullOperation or IIsPatternOperation or IIsTypeOperation:
                return;
            case IBinaryOperation binary when Flow.IsNullConstant(binary.LeftOperand) || Flow.IsNullConstant(binary.RightOperand):
                return;
            case IBinaryOperation { OperatorKind: BinaryOperatorKind.Equals or BinaryOperatorKind.NotEquals } identity
                when identity.LeftOperand.Type?.IsReferenceType == true:
                return; // comparing references reads no element: "is this the array I returned?" is fine after Return
            case IArgumentOperation { Parent: IInvocationOperation { TargetMethod.Name: "ReferenceEquals" or "Same" or "NotSame" } }:
                return;
        }

        // A held heap used where any path into the point crossed an await is wrong on that path: no condition makes it right.
        if (_reporting && (state[v.Index] == Bits.Released
                           || (v.Kind == ResourceKind.ThreadHeap && (state[v.Index] & Bits.Released) != 0 && (state[v.Index] & Bits.Escaped) == 0)))
            ReportUse(v, leaf, context);

        switch (context)
        {
            case IArgumentOperation argument:
                RefKind refKind = argument.Parameter?.RefKind ?? RefKind.None;
                if (refKind is RefKind.Out or RefKind.Ref) state[v.Index] = Bits.Escaped;
                // A held heap handed to a method is borrowed: MNL107 reports a callee that keeps it at the call.
                else if (v.Kind == ResourceKind.ThreadHeap) break;
                // A resource the caller must release stays the caller's unless the callee keeps it (CA2000's default).
                else if (IsLeakKind(v.Kind))
                {
                    if (_fates.Of(argument) == ArgumentFate.Keeps) state[v.Index] = Bits.Escaped;
                }
                else if (!v.HasRelease) state[v.Index] = Bits.Escaped;
                // The method releases it elsewhere, so this call most likely borrows it; but it may keep it, so a path
                // that ends here without a release is not reported (a later release still makes it Released).
                else if ((state[v.Index] & Bits.Live) != 0) state[v.Index] |= Bits.Escaped;
                break;
            case IInvocationOperation i when i.Instance == child:
            case IPropertyReferenceOperation p when p.Instance == child:
            case IFieldReferenceOperation f when f.Instance == child:
            case IArrayElementReferenceOperation e when e.ArrayReference == child:
            case IEventReferenceOperation ev when ev.Instance == child:
            case IInterpolationOperation:
            case IBinaryOperation:
            case IUnaryOperation:
            case IExpressionStatementOperation:
                break;
            default:
                state[v.Index] = Bits.Escaped;
                break;
        }
    }

    // ---------------------------------------------------------------- default handles (MNL108)

    /// <summary><c>default</c>, <c>default(T)</c> or <c>new T()</c> of a struct record handle: a handle that names no record.</summary>
    private bool IsDefaultHandle(IOperation value) => value switch
    {
        IDefaultValueOperation d => _known.IsRecordHandle(d.Type),
        IObjectCreationOperation { Arguments.Length: 0, Initializer: null } c => _known.IsRecordHandle(c.Type),
        _ => false,
    };

    /// <summary>A reference that asks whether the handle is allocated: <c>h.IsAllocated</c>, <c>h == default</c>, <c>h.Equals(…)</c>.</summary>
    private static bool TestsAllocation(IOperation reference)
    {
        IOperation? context = Flow.Context(reference, out IOperation child);
        return context switch
        {
            IPropertyReferenceOperation p => p.Instance == child && p.Property.Name == "IsAllocated",
            IInvocationOperation i => i.Instance == child && i.TargetMethod.Name == "Equals",
            IBinaryOperation { OperatorKind: BinaryOperatorKind.Equals or BinaryOperatorKind.NotEquals } => true,
            IIsPatternOperation => true,
            IArgumentOperation { Parent: IInvocationOperation { TargetMethod.Name: "Equals" } } => true,
            _ => false,
        };
    }

    private void ApplyDefault(IOperation op, byte[] state)
    {
        switch (op)
        {
            case ISimpleAssignmentOperation { Target: ILocalReferenceOperation target } assignment when _defaults.TryGetValue(target.Local, out Var? dv):
                if (dv.Tracked) state[dv.Index] = IsDefaultHandle(Resolve(assignment.Value)) ? Bits.Released : Bits.Live;
                break;
            case ILocalReferenceOperation or IFlowCaptureReferenceOperation when Resolve(op) is ILocalReferenceOperation local
                                                                                && _defaults.TryGetValue(local.Local, out Var? dv) && dv.Tracked:
            {
                IOperation reference = op;
                if (Flow.Context(reference, out _) is IFlowCaptureOperation) break; // the use is where the capture is read
                IOperation? context = Flow.Context(reference, out IOperation child);
                string? how = context switch
                {
                    IPropertyReferenceOperation p when p.Instance == child && !KnownSymbols.ReadsNoRecord(p.Property.Name) => "used",
                    IInvocationOperation i when i.Instance == child && i.TargetMethod.Name == "Delete" => "deleted",
                    IInvocationOperation i when i.Instance == child && !KnownSymbols.ReadsNoRecord(i.TargetMethod.Name) => "used",
                    IArgumentOperation { Parent: IInvocationOperation deleting } when _known.DeletesHandleArgument(deleting.TargetMethod) => "deleted",
                    _ => null,
                };
                if (context is IArgumentOperation { Parameter.RefKind: RefKind.Out or RefKind.Ref } || context is ITupleOperation)
                    state[dv.Index] = Bits.Escaped; // written through a ref, an out or a deconstruction: whatever it holds now is unknown
                byte s = state[dv.Index];
                if (how is null || !_reporting || dv.Tested || (s & Bits.Released) == 0 || (s & (Bits.Escaped | Bits.Unset | Bits.Conditioned)) != 0) break;
                Report(Descriptors.DefaultHandleUsed, reference, dv, s == Bits.Released
                    ? Descriptors.Text("Flow18", how)
                    : Descriptors.Text("Flow19", how));
                break;
            }
        }
    }

    private void ThrowPoint(byte[] state, BasicBlock block, IOperation? at)
    {
        // Code in a catch or finally runs after the failure it handles; whether it throws in turn is a second failure.
        if (!_reporting || at is null || Flow.InHandler(block)) return;
        foreach (Var v in _list)
        {
            byte st = state[v.Index];
            if (!v.Tracked || v.ThrowPoints.Count >= 8 || !v.HasCreation || (st & Bits.Live) == 0 || (st & (Bits.Unset | Bits.Released)) != 0) continue;
            if (v.Kind is not (ResourceKind.PooledArray or ResourceKind.BufferOwner or ResourceKind.Scope)) continue;
            if (!Protected(block, v)) v.ThrowPoints.Add((at, block.Ordinal));
        }
    }

    private bool Reaches(int from, int to)
    {
        if (from == to) return true;
        var seen = new HashSet<int> { from };
        var work = new Stack<int>();
        work.Push(from);
        while (work.Count > 0)
        {
            BasicBlock b = _blocks[work.Pop()];
            foreach (ControlFlowBranch? branch in new[] { b.FallThroughSuccessor, b.ConditionalSuccessor })
            {
                if (branch?.Destination is not { } d) continue;
                if (d.Ordinal == to) return true;
                if (seen.Add(d.Ordinal)) work.Push(d.Ordinal);
            }
        }
        return false;
    }

    /// <summary>Inside a try whose finally releases the variable, or whose catch releases it or catches everything.</summary>
    private bool Protected(BasicBlock block, Var v)
    {
        for (ControlFlowRegion? r = block.EnclosingRegion; r is not null; r = r.EnclosingRegion)
        {
            if (r.Kind != ControlFlowRegionKind.Try || r.EnclosingRegion is not { } parent) continue;
            for (int i = 1; i < parent.NestedRegions.Length; i++)
            {
                ControlFlowRegion handler = parent.NestedRegions[i];
                if (ReleasesIn(handler, v)) return true;
                if (handler.Kind == ControlFlowRegionKind.Catch && IsCatchAll(handler.ExceptionType)) return true;
                if (handler.Kind == ControlFlowRegionKind.FilterAndHandler) return true;
            }
        }
        return false;
    }

    private static bool IsCatchAll(ITypeSymbol? type) =>
        type is null || (type.Name == "Exception" && type.ContainingNamespace?.Name == "System" && type.ContainingNamespace.ContainingNamespace?.IsGlobalNamespace == true);

    private static bool ReleasesIn(ControlFlowRegion region, Var v)
    {
        foreach ((_, int block) in v.Releases)
            if (block >= region.FirstBlockOrdinal && block <= region.LastBlockOrdinal) return true;
        return false;
    }

    // ---------------------------------------------------------------- reports

    private static bool IsLeakKind(ResourceKind kind) =>
        kind is ResourceKind.PooledArray or ResourceKind.BufferOwner or ResourceKind.Scope or ResourceKind.Disposable or ResourceKind.RecordArray;

    /// <summary>A copy or an encoding into a pooled array rented with a size that cannot be too small for it: <c>CopyTo</c>
    /// from the value whose length sized the Rent (<c>Rent(checked((int)seq.Length))</c> then <c>seq.CopyTo(a)</c>), or an
    /// <c>Encoding</c>'s GetBytes/GetChars into an array sized by <c>GetMaxByteCount</c>/<c>GetMaxCharCount</c>.</summary>
    private bool IntoSizedBuffer(IInvocationOperation invocation)
    {
        string name = invocation.TargetMethod.Name;
        if (name is not ("CopyTo" or "TryCopyTo" or "GetBytes" or "GetChars")) return false;
        Var? destination = null;
        foreach (IArgumentOperation argument in invocation.Arguments)
        {
            IOperation value = Flow.StripConversions(argument.Value);
            if (value is IInvocationOperation { TargetMethod.Name: "AsSpan" or "AsMemory" } view && view.Arguments.Length > 0)
                value = view.Arguments[0].Value;
            bool isSource = invocation.Instance is null && name is "CopyTo" or "TryCopyTo" && argument == invocation.Arguments[0];
            if (!isSource && VarOf(value) is { Kind: ResourceKind.PooledArray, RentSize: not null } v) destination = v;
        }
        if (destination?.RentSize is not { } size) return false;
        if (name is "GetBytes" or "GetChars")
        {
            foreach (IOperation o in size.DescendantsAndSelf())
                if (o is IInvocationOperation { TargetMethod.Name: "GetMaxByteCount" or "GetMaxCharCount" }) return true;
            return false;
        }
        // CopyTo: the source is the receiver (seq.CopyTo(a), span.CopyTo(a)) or the extension's first argument.
        IOperation? source = invocation.Instance ?? (invocation.Arguments.Length > 0 ? invocation.Arguments[0].Value : null);
        if (source is null || SourceSymbol(source) is not { } sourceSymbol) return false;
        foreach (IOperation o in size.DescendantsAndSelf())
            if (SourceSymbol(o) is { } s && SymbolEqualityComparer.Default.Equals(s, sourceSymbol)
                && o.Parent is IPropertyReferenceOperation { Property.Name: "Length" or "Count" }) return true;
        return false;
    }

    private static ISymbol? SourceSymbol(IOperation op) => Flow.StripConversions(op) switch
    {
        ILocalReferenceOperation l => l.Local,
        IParameterReferenceOperation p => p.Parameter,
        IFieldReferenceOperation f => f.Field,
        _ => null,
    };

    private void ReportLeaks(Run run, BasicBlock block)
    {
        foreach (ControlFlowBranch? branch in new[] { block.FallThroughSuccessor, block.ConditionalSuccessor })
        {
            if (branch?.Destination is not { } destination) continue;
            byte[]? state = EdgeState(run, branch);
            if (state is null) continue;
            bool toExit = destination.Kind == BasicBlockKind.Exit;
            foreach (Var v in _list)
            {
                if (!v.Tracked || !v.HasCreation || v.IsParameter || !IsLeakKind(v.Kind)) continue;
                if (!toExit && !LeavesScope(branch, v.Symbol)) continue;
                byte s = state[v.Index];
                if ((s & Bits.Live) == 0 || (s & Bits.Escaped) != 0) continue;
                if ((s & Bits.Unset) != 0 && v.HasRelease) continue; // rented on a condition the release tests again
                if (ReleasedInFinally(v)) continue; // a finally that releases on a condition tests an ownership flag
                ReportLeak(v, null, v.HasRelease ? "not on every path" : "never");
            }
        }
    }

    private bool ReleasedInFinally(Var v)
    {
        foreach ((_, int block) in v.Releases)
            for (ControlFlowRegion? r = _blocks[block].EnclosingRegion; r is not null; r = r.EnclosingRegion)
                if (r.Kind == ControlFlowRegionKind.Finally) return true;
        return false;
    }

    private static bool LeavesScope(ControlFlowBranch branch, ISymbol symbol)
    {
        foreach (ControlFlowRegion region in branch.LeavingRegions)
            foreach (ILocalSymbol local in region.Locals)
                if (SymbolEqualityComparer.Default.Equals(local, symbol)) return true;
        return false;
    }

    private void ReportLeak(Var v, IOperation? at, string how)
    {
        if (v.Reported) return;
        v.Reported = true;
        Location location = at?.Syntax.GetLocation() ?? v.CreationLocation ?? Location.None;
        string key = "Leak" + v.Kind + how switch
        {
            "overwritten before" => "Overwritten",
            "never" => "Never",
            _ => "SomePaths",
        };
        DiagnosticDescriptor? rule = v.Kind switch
        {
            ResourceKind.PooledArray => Descriptors.RentedNotReturned,
            ResourceKind.BufferOwner => Descriptors.BufferOwnerMisuse,
            ResourceKind.Scope or ResourceKind.Disposable or ResourceKind.RecordArray => Descriptors.ScopeOrDisposableDropped,
            _ => null,
        };
        if (rule is not null) Report(rule, location, v, Descriptors.Text(key));
    }

    private void ReportUse(Var v, IOperation leaf, IOperation? context)
    {
        string verb = context is IReturnOperation ? "returned" : context is IArgumentOperation ? "passed on" : "used";
        switch (v.Kind)
        {
            case ResourceKind.PooledArray: Report(Descriptors.ReturnedTwiceOrUsedAfterReturn, leaf, v, Descriptors.Text("Flow20", verb)); break;
            case ResourceKind.BufferOwner: Report(Descriptors.BufferOwnerMisuse, leaf, v, Descriptors.Text("Flow21", verb)); break;
            case ResourceKind.PooledObject: Report(Descriptors.PooledObjectMisuse, leaf, v, Descriptors.Text("Flow22", verb)); break;
            case ResourceKind.Record: Report(Descriptors.TypedMemoryMisuse, leaf, v, Descriptors.Text("Flow23", verb)); break;
            case ResourceKind.RecordArray: Report(Descriptors.TypedMemoryMisuse, leaf, v, Descriptors.Text("Flow24", verb)); break;
            case ResourceKind.ThreadHeap: Report(Descriptors.ThreadAffineEscapes, leaf, v, Descriptors.Text("Flow25", verb)); break;
        }
    }

    private void Report(DiagnosticDescriptor rule, IOperation at, Var v, LocalizableString what) =>
        Report(rule, at.Syntax.GetLocation(), v, what);

    private void Report(DiagnosticDescriptor rule, Location location, Var v, LocalizableString what)
    {
        if (!_reported.Add((rule.Id, location.SourceSpan.Start))) return;
        _report(Diagnostic.Create(rule, location, v.Symbol.Name, what));
    }

    private static string Describe(IOperation op)
    {
        string text = op.Syntax.ToString().Replace("\r", " ").Replace("\n", " ");
        if (text.Length > 48) text = text.Substring(0, 45) + "...";
        return "'" + text + "'";
    }

    // ---------------------------------------------------------------- state helpers

    private static byte[]? Copy(byte[]? state) => state is null ? null : (byte[])state.Clone();

    private static byte[]? Merge(byte[]? into, byte[]? other)
    {
        if (other is null) return into;
        if (into is null) return (byte[])other.Clone();
        for (int i = 0; i < into.Length; i++) into[i] |= other[i];
        return into;
    }

    private static bool Same(byte[] a, byte[] b)
    {
        for (int i = 0; i < a.Length; i++) if (a[i] != b[i]) return false;
        return true;
    }
}
