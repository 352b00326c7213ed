using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;

namespace Manaloc.Generators;

/// <summary>
/// Suppresses the build-time trim and AOT analyzer's IL2026 and IL3050 at a TypeAllocator call that the generator intercepts:
/// the analyzer reads the call as written (the annotated general method), while the compiled program calls the interceptor,
/// which uses the record's compiled registration (so the NativeAOT compiler, which sees the compiled program, is quiet there
/// too). The pattern of ASP.NET Core's request delegate generator and the configuration binder generator.
/// </summary>
/// <remarks>Only a call the compiler actually intercepts with the generated class is suppressed: a call the generator left
/// alone (a type parameter or an unmarked interface for T, interceptors not enabled) keeps its warnings.</remarks>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class NativeRecordSuppressor : DiagnosticSuppressor
{
    private static readonly SuppressionDescriptor s_unreferencedCode = new("MNLSPR2026", "IL2026",
        "The call's interface is a [NativeRecord] interface: the generated interceptor uses its compile-time implementation, no reflection");

    private static readonly SuppressionDescriptor s_dynamicCode = new("MNLSPR3050", "IL3050",
        "The call's interface is a [NativeRecord] interface: the generated interceptor uses its compile-time implementation, no Reflection.Emit");

    /// <inheritdoc/>
    public override ImmutableArray<SuppressionDescriptor> SupportedSuppressions { get; } = ImmutableArray.Create(s_unreferencedCode, s_dynamicCode);

    /// <inheritdoc/>
    public override void ReportSuppressions(SuppressionAnalysisContext context)
    {
        foreach (var diagnostic in context.ReportedDiagnostics)
        {
            var descriptor = diagnostic.Id == "IL2026" ? s_unreferencedCode : diagnostic.Id == "IL3050" ? s_dynamicCode : null;
            if (descriptor is null || diagnostic.Location.SourceTree is not { } tree) continue;
            var node = tree.GetRoot(context.CancellationToken).FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
            var invocation = node.AncestorsAndSelf().OfType<InvocationExpressionSyntax>().FirstOrDefault();
            // A warning inside the arguments (NewArray's count) belongs to another member: only the call itself is suppressed.
            if (invocation is null || invocation.ArgumentList.Span.Contains(diagnostic.Location.SourceSpan)) continue;
            var model = context.GetSemanticModel(tree);
#pragma warning disable RSEXPERIMENTAL002 // GetInterceptorMethod: the one way to ask which method replaces a call
            var interceptor = model.GetInterceptorMethod(invocation, context.CancellationToken);
#pragma warning restore RSEXPERIMENTAL002
            if (interceptor?.ContainingType is { Name: InterceptorSource.ClassName } type
                && type.ContainingNamespace.ToDisplayString() == CallSites.InterceptorNamespace)
            {
                context.ReportSuppression(Suppression.Create(descriptor, diagnostic));
            }
        }
    }
}
