using System.Linq;

namespace Manaloc.Analyzers;

/// <summary>
/// MNL110: the memory of a pooled owner (<c>PooledBufferWriter.WrittenSequence</c>, <c>PooledBufferStream.GetReadOnlySequence()</c>,
/// a <c>RentedBuffer</c>'s or a memory owner's <c>Memory</c> or <c>Array</c>, and what is sliced or built from them) leaving
/// the method while the method disposes the owner (<c>using</c>, or a <c>Dispose()</c> outside a <c>catch</c>): returned,
/// stored in a field, a property or an array element, added to a collection, captured by a lambda that outlives the
/// method, or built into an object that is (an <c>IResult</c>, a constructor's object, a Memory or a sequence over it).
/// The reader then reads the segments after the Dispose, when another renter owns them. Copies (<c>ToArray</c>,
/// <c>CopyTo</c>, <c>GetString</c>) and calls that only borrow the memory (a write to a stream, awaited or not) are left
/// alone; so is an owner that is not disposed here (a parameter, a field, one handed on).
/// </summary>
internal static class PooledMemory
{
    /// <summary>The cheap filter, applied by the caller's walk: a property or call that hands out an owner's memory.</summary>
    public static bool IsSource(IOperation op, KnownSymbols known, out ILocalSymbol? owner)
    {
        owner = null;
        IOperation? instance;
        switch (op)
        {
            case IPropertyReferenceOperation { Instance: { } i } p
                when (p.Property.Name == "WrittenSequence" && known.IsPooledWriter(i.Type))
                     || (p.Property.Name is "Memory" or "Array" && known.IsBufferOwner(Flow.StripConversions(i).Type)):
                instance = i;
                break;
            case IInvocationOperation { Instance: { } i, TargetMethod.Name: "GetReadOnlySequence" or "GetMemory" } when known.IsPooledWriter(i.Type):
                instance = i;
                break;
            default:
                return false;
        }
        owner = Flow.StripConversions(instance) is ILocalReferenceOperation l ? l.Local : null;
        return true;
    }

    /// <summary>The filter: an owner's memory handed out, or copied out through <c>TryGetBuffer(out segment)</c>.</summary>
    public static bool HandsOutMemory(IOperation op, KnownSymbols known) =>
        IsSource(op, known, out _)
        || (op is IInvocationOperation { TargetMethod.Name: "TryGetBuffer", Instance: { } i } && known.IsPooledWriter(i.Type));

    public static void Analyze(IOperation root, KnownSymbols known, Action<Diagnostic> report)
    {
        HashSet<ILocalSymbol> disposed = DisposedOwners(root, known);
        if (disposed.Count == 0) return;
        var memory = new Dictionary<ILocalSymbol, ILocalSymbol>(SymbolEqualityComparer.Default); // a local holding memory -> its owner
        for (int pass = 0; pass < 2; pass++)
            foreach (IOperation op in root.Descendants())
            {
                switch (op)
                {
                    case IVariableDeclaratorOperation { Initializer.Value: { } init } d when Of(init, known, disposed, memory) is { } o:
                        memory[d.Symbol] = o;
                        break;
                    case ISimpleAssignmentOperation { Target: ILocalReferenceOperation target } a when Of(a.Value, known, disposed, memory) is { } o:
                        memory[target.Local] = o;
                        break;
                    case IForEachLoopOperation loop when Of(loop.Collection, known, disposed, memory) is { } o:
                        foreach (ILocalSymbol item in loop.Locals) memory[item] = o;
                        break;
                    // TryGetBuffer(out segment), MemoryMarshal.TryGetArray(memory, out segment), sequence.TryGet(ref position, out memory)
                    case IArgumentOperation { Parameter.RefKind: RefKind.Out } argument
                        when OutLocal(argument.Value) is { } outLocal && argument.Parent is IInvocationOperation call
                             && FromCall(call, argument, known, disposed, memory) is { } o:
                        memory[outLocal] = o;
                        break;
                }
            }

        var reported = new HashSet<int>();
        void Report(IOperation at, ILocalSymbol owner, LocalizableString what)
        {
            if (reported.Add(at.Syntax.SpanStart))
                report(Diagnostic.Create(Descriptors.PooledMemoryEscapes, at.Syntax.GetLocation(), at.Syntax.ToString(),
                    Descriptors.Text("Memory32", what, owner.Name)));
        }

        foreach (IOperation op in root.Descendants())
        {
            if (Of(op, known, disposed, memory) is not { } owner || CapturedFromOutside(op, owner, root)) continue;
            IOperation? context = Flow.Context(op, out IOperation child);
            switch (context)
            {
                case IReturnOperation { Kind: OperationKind.Return }:
                    Report(op, owner, Descriptors.Text("Memory33"));
                    break;
                case ISimpleAssignmentOperation { Target: IFieldReferenceOperation or IPropertyReferenceOperation or IArrayElementReferenceOperation } a when a.Value == child:
                    Report(op, owner, Descriptors.Text("Memory34", a.Target.Syntax));
                    break;
                case IArgumentOperation { Parent: IInvocationOperation add } when known.AddsToCollection(add.TargetMethod):
                    Report(op, owner, Descriptors.Text("Memory35"));
                    break;
            }
        }

        foreach (IOperation op in root.Descendants())
        {
            if (op is not IAnonymousFunctionOperation lambda || !MovingViews.Outlives(lambda, known)) continue;
            foreach (IOperation inner in lambda.Body.Descendants())
            {
                ILocalSymbol? owner = inner switch
                {
                    ILocalReferenceOperation l when memory.TryGetValue(l.Local, out ILocalSymbol? o) && !Declares(lambda, l.Local) => o,
                    _ when IsSource(inner, known, out ILocalSymbol? o) && o is not null && disposed.Contains(o) && !Declares(lambda, o) => o,
                    _ => null,
                };
                if (owner is not null)
                    Report(inner, owner, Descriptors.Text("Memory36"));
            }
        }
    }

    /// <summary>The owner whose pooled memory <paramref name="value"/> holds, or null.</summary>
    private static ILocalSymbol? Of(IOperation value, KnownSymbols known, HashSet<ILocalSymbol> disposed, Dictionary<ILocalSymbol, ILocalSymbol> memory)
    {
        value = Flow.StripConversions(value);
        switch (value)
        {
            case ILocalReferenceOperation l:
                return memory.TryGetValue(l.Local, out ILocalSymbol? held) ? held : null;
            case IPropertyReferenceOperation or IInvocationOperation when IsSource(value, known, out ILocalSymbol? owner):
                return owner is not null && disposed.Contains(owner) ? owner : null;
            case IPropertyReferenceOperation { Instance: { } instance } p when CarriesMemory(p.Type, known):
                return Of(instance, known, disposed, memory);
            case IInvocationOperation invocation when !IsCopy(invocation.TargetMethod.Name)
                                                     && (CarriesMemory(invocation.Type, known) || IsResult(invocation.Type)):
                if (invocation.Instance is not null && Of(invocation.Instance, known, disposed, memory) is { } fromInstance) return fromInstance;
                return FromArguments(invocation.Arguments, known, disposed, memory);
            case IObjectCreationOperation creation:
                return FromArguments(creation.Arguments, known, disposed, memory);
            case IConditionalOperation { WhenFalse: { } whenFalse } c:
                return Of(c.WhenTrue, known, disposed, memory) ?? Of(whenFalse, known, disposed, memory);
            case ICoalesceOperation c:
                return Of(c.Value, known, disposed, memory) ?? Of(c.WhenNull, known, disposed, memory);
            default:
                return null;
        }
    }

    private static ILocalSymbol? OutLocal(IOperation value) => value switch
    {
        ILocalReferenceOperation l => l.Local,
        IDeclarationExpressionOperation { Expression: ILocalReferenceOperation l } => l.Local,
        _ => null,
    };

    private static ILocalSymbol? FromCall(IInvocationOperation call, IArgumentOperation except, KnownSymbols known, HashSet<ILocalSymbol> disposed, Dictionary<ILocalSymbol, ILocalSymbol> memory)
    {
        if (call.Instance is not null && Of(call.Instance, known, disposed, memory) is { } owner) return owner;
        if (call.TargetMethod.Name == "TryGetBuffer" && call.Instance is not null
            && Flow.StripConversions(call.Instance) is ILocalReferenceOperation l && disposed.Contains(l.Local))
            return l.Local;
        foreach (IArgumentOperation argument in call.Arguments)
            if (argument != except && argument.Parameter?.RefKind != RefKind.Out && Of(argument.Value, known, disposed, memory) is { } o) return o;
        return null;
    }

    private static ILocalSymbol? FromArguments(ImmutableArray<IArgumentOperation> arguments, KnownSymbols known, HashSet<ILocalSymbol> disposed, Dictionary<ILocalSymbol, ILocalSymbol> memory)
    {
        foreach (IArgumentOperation argument in arguments)
        {
            // A span of it cannot be kept by what the call builds.
            if (argument.Parameter?.Type is { IsRefLikeType: true }) continue;
            if (Of(argument.Value, known, disposed, memory) is { } owner) return owner;
        }
        return null;
    }

    private static bool IsCopy(string name) =>
        name is "ToArray" or "ToList" or "ToString" or "GetString" or "CopyTo" or "TryCopyTo" or "Clone" or "ToImmutableArray";

    /// <summary>Memory, ReadOnlyMemory, ReadOnlySequence, ArraySegment, an array, a sequence segment.</summary>
    private static bool CarriesMemory(ITypeSymbol? type, KnownSymbols known)
    {
        if (type is null) return false;
        if (type is IArrayTypeSymbol) return true;
        if (type.IsRefLikeType) return false;
        return type.Name is "Memory" or "ReadOnlyMemory" or "ReadOnlySequence" or "ArraySegment" or "ReadOnlySequenceSegment"
               && type.ContainingNamespace?.ToDisplayString() is "System" or "System.Buffers";
    }

    /// <summary>An ASP.NET Core result (<c>IResult</c>): written after the handler returns.</summary>
    private static bool IsResult(ITypeSymbol? type)
    {
        if (type is null) return false;
        if (type.Name == "IResult") return true;
        foreach (INamedTypeSymbol i in type.AllInterfaces)
            if (i.Name == "IResult" && i.ContainingNamespace?.ToDisplayString() == "Microsoft.AspNetCore.Http") return true;
        return false;
    }

    /// <summary>Owner locals the method disposes: a using declaration or statement, or a Dispose() outside a catch.</summary>
    private static HashSet<ILocalSymbol> DisposedOwners(IOperation root, KnownSymbols known)
    {
        var owners = new HashSet<ILocalSymbol>(SymbolEqualityComparer.Default);
        foreach (IOperation op in root.Descendants())
        {
            switch (op)
            {
                case IUsingDeclarationOperation declaration:
                    foreach (IVariableDeclarationOperation d in declaration.DeclarationGroup.Declarations)
                        foreach (IVariableDeclaratorOperation v in d.Declarators)
                            if (known.IsBufferOwner(v.Symbol.Type)) owners.Add(v.Symbol);
                    break;
                case IUsingOperation { Resources: IVariableDeclarationGroupOperation group }:
                    foreach (IVariableDeclarationOperation d in group.Declarations)
                        foreach (IVariableDeclaratorOperation v in d.Declarators)
                            if (known.IsBufferOwner(v.Symbol.Type)) owners.Add(v.Symbol);
                    break;
                case IUsingOperation { Resources: ILocalReferenceOperation local } when known.IsBufferOwner(local.Type):
                    owners.Add(local.Local);
                    break;
                case IInvocationOperation { TargetMethod.Name: "Dispose" or "DisposeAsync", Instance: { } instance } dispose
                    when Flow.StripConversions(instance) is ILocalReferenceOperation local && known.IsBufferOwner(local.Type) && !InCatch(dispose, root):
                    owners.Add(local.Local);
                    break;
            }
        }
        return owners;
    }

    private static bool InCatch(IOperation op, IOperation root)
    {
        for (IOperation? p = op.Parent; p is not null && p != root; p = p.Parent)
        {
            if (p is ICatchClauseOperation) return true;
            if (p is IAnonymousFunctionOperation or ILocalFunctionOperation) return true; // disposed by code that may run later
        }
        return false;
    }

    /// <summary>Inside a lambda or local function that does not declare the owner (the capture check speaks for it).</summary>
    private static bool CapturedFromOutside(IOperation op, ILocalSymbol owner, IOperation root)
    {
        for (IOperation? p = op.Parent; p is not null && p != root; p = p.Parent)
            if (p is IAnonymousFunctionOperation or ILocalFunctionOperation)
                return owner.DeclaringSyntaxReferences.Length == 0 || !p.Syntax.Span.Contains(owner.DeclaringSyntaxReferences[0].Span);
        return false;
    }

    private static bool Declares(IAnonymousFunctionOperation lambda, ILocalSymbol local) =>
        local.DeclaringSyntaxReferences.Length > 0 && lambda.Syntax.Span.Contains(local.DeclaringSyntaxReferences[0].Span);
}
