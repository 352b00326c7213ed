namespace Manaloc.Analyzers;

/// <summary>
/// MNL112: a RecordArray's own moving view (<c>MoveTo</c>, <c>Scan()</c>, <c>View</c>) used on an array that other threads can
/// reach, from code that may run on several threads at once. The array has one view; two threads that move it read each
/// other's records. Reported where the analyzer can tell both halves: the array is a field or a property (or a local or
/// parameter captured by the lambda), and the code is a lambda run by <c>Parallel</c>, <c>Task.Run</c>, a task factory, the
/// thread pool, a <c>Thread</c>, a dispatcher or an ASP.NET Core endpoint (<c>MapGet</c>…), or an async method or lambda
/// over a field. An array local to the code that moves it, and a method that is not known to run concurrently, stay silent.
/// </summary>
internal static class SharedViews
{
    public static void Analyze(IOperation root, ISymbol owner, KnownSymbols known, Action<Diagnostic> report)
    {
        bool asyncMethod = owner is IMethodSymbol { IsAsync: true };
        foreach (IOperation op in root.Descendants())
        {
            IOperation? receiver = op switch
            {
                IInvocationOperation { TargetMethod.Name: "MoveTo" or "Scan", Instance: { } i } when KnownSymbols.Is(i.Type, known.RecordArray) => i,
                IPropertyReferenceOperation { Property.Name: "View", Instance: { } i } when KnownSymbols.Is(i.Type, known.RecordArray) => i,
                _ => null,
            };
            if (receiver is null) continue;
            receiver = Flow.StripConversions(receiver);
            string? why = null;
            string name = receiver.Syntax.ToString();
            bool field = receiver is IFieldReferenceOperation { Instance: null or IInstanceReferenceOperation }
                         or IPropertyReferenceOperation { Instance: null or IInstanceReferenceOperation, Arguments.Length: 0 };
            bool inLambda = false, inLocalFunction = false;
            // The innermost lambda that may run concurrently decides (a LINQ lambda inside a Parallel.For body counts).
            for (IOperation? p = op.Parent; p is not null && p != root && why is null; p = p.Parent)
            {
                if (p is ILocalFunctionOperation) inLocalFunction = true;
                if (p is not IAnonymousFunctionOperation lambda) continue;
                inLambda = true;
                if (Concurrent(lambda, known) is not { } concurrent) continue;
                if (field) why = concurrent;
                // A captured local or parameter: shared between the runs of a lambda that runs on other threads; an async
                // lambda alone does not say that two of its runs overlap.
                else if (receiver is ILocalReferenceOperation or IParameterReferenceOperation && !Declares(lambda, receiver)
                         && (ManyRuns(lambda) || MovedOutside(root, lambda, receiver, known)))
                    why = concurrent;
            }
            if (why is null && field && asyncMethod && !inLambda && !inLocalFunction) why = "an async method, which concurrent callers run at once";
            if (why is null) continue;
            string move = op is IPropertyReferenceOperation ? "View" : ((IInvocationOperation)op).TargetMethod.Name + "()";
            report(Diagnostic.Create(Descriptors.MovingViewShared, op.Syntax.GetLocation(), name,
                Descriptors.Text("Shared37", move, why)));
        }
    }

    /// <summary>Why the lambda may run on several threads at once, or null.</summary>
    private static string? Concurrent(IAnonymousFunctionOperation lambda, KnownSymbols known)
    {
        IOperation? p = lambda.Parent;
        while (p is IConversionOperation or IDelegateCreationOperation) p = p.Parent;
        if (p is IArgumentOperation argument) p = argument.Parent;
        switch (p)
        {
            case IInvocationOperation invocation:
                IMethodSymbol m = invocation.TargetMethod;
                if (IsEndpoint(m)) return "an endpoint handler, which concurrent requests run at once";
                if (known.RunsElsewhere(m.ContainingType)) return "a lambda passed to " + m.ContainingType.Name + "." + m.Name + ", which runs it on other threads";
                break;
            case IObjectCreationOperation creation when known.RunsElsewhere(creation.Type as INamedTypeSymbol):
                return "a lambda run by a new " + creation.Type!.Name;
        }
        return lambda.Symbol.IsAsync ? "an async lambda, which concurrent callers run at once" : null;
    }

    /// <summary>Parallel and an endpoint run the same lambda on several threads at once; Task.Run or a thread runs it once.</summary>
    private static bool ManyRuns(IAnonymousFunctionOperation lambda)
    {
        IOperation? p = lambda.Parent;
        while (p is IConversionOperation or IDelegateCreationOperation or IArgumentOperation) p = p.Parent;
        return p is IInvocationOperation invocation && (invocation.TargetMethod.ContainingType.Name == "Parallel" || IsEndpoint(invocation.TargetMethod));
    }

    /// <summary>The code outside the lambda moves the same array's view too (the lambda runs beside it).</summary>
    private static bool MovedOutside(IOperation root, IAnonymousFunctionOperation lambda, IOperation receiver, KnownSymbols known)
    {
        ISymbol symbol = receiver is ILocalReferenceOperation l ? l.Local : ((IParameterReferenceOperation)receiver).Parameter;
        foreach (IOperation op in root.Descendants())
        {
            if (lambda.Syntax.Span.Contains(op.Syntax.Span)) continue;
            IOperation? r = op switch
            {
                IInvocationOperation { TargetMethod.Name: "MoveTo" or "Scan", Instance: { } i } when KnownSymbols.Is(i.Type, known.RecordArray) => i,
                IPropertyReferenceOperation { Property.Name: "View", Instance: { } i } when KnownSymbols.Is(i.Type, known.RecordArray) => i,
                _ => null,
            };
            ISymbol? moved = r is null ? null : Flow.StripConversions(r) switch
            {
                ILocalReferenceOperation lr => lr.Local,
                IParameterReferenceOperation pr => pr.Parameter,
                _ => null,
            };
            if (moved is not null && SymbolEqualityComparer.Default.Equals(moved, symbol)) return true;
        }
        return false;
    }

    /// <summary>An ASP.NET Core route handler: MapGet, MapPost, Map… on an IEndpointRouteBuilder.</summary>
    private static bool IsEndpoint(IMethodSymbol m)
    {
        if (!m.Name.StartsWith("Map", StringComparison.Ordinal)) return false;
        if (m.ContainingType.Name.EndsWith("EndpointRouteBuilderExtensions", StringComparison.Ordinal)) return true;
        IMethodSymbol declared = m.ReducedFrom ?? m;
        return declared.Parameters.Length > 0 && declared.Parameters[0].Type.Name == "IEndpointRouteBuilder";
    }

    private static bool Declares(IAnonymousFunctionOperation lambda, IOperation reference)
    {
        ISymbol symbol = reference is ILocalReferenceOperation l ? l.Local : ((IParameterReferenceOperation)reference).Parameter;
        return symbol.DeclaringSyntaxReferences.Length > 0 && lambda.Syntax.Span.Contains(symbol.DeclaringSyntaxReferences[0].Span);
    }
}
