namespace Manaloc.Analyzers;

/// <summary>The MNL1xx rules. Every message names the variable; every rule links to its section of docs/analyzers.md.</summary>
internal static class Descriptors
{
    private const string Category = "Reliability";
    private const string HelpBase = "https://github.com/manaloc/manaloc/blob/main/docs/analyzers.md#";

    public static readonly DiagnosticDescriptor RentedNotReturned = Rule(
        "MNL101", "Rented array not returned on every path",
        "'{0}' is rented from an ArrayPool but {1}");

    public static readonly DiagnosticDescriptor ReturnedTwiceOrUsedAfterReturn = Rule(
        "MNL102", "Pooled array returned twice or used after its Return",
        "'{0}' {1}");

    public static readonly DiagnosticDescriptor BufferOwnerMisuse = Rule(
        "MNL103", "Buffer owner not disposed, disposed twice or used after Dispose",
        "'{0}' {1}");

    public static readonly DiagnosticDescriptor PooledObjectMisuse = Rule(
        "MNL104", "Pooled object used after its Return or returned twice",
        "'{0}' {1}");

    public static readonly DiagnosticDescriptor TypedMemoryMisuse = Rule(
        "MNL105", "Typed memory used after Delete or Dispose, or deleted twice",
        "'{0}' {1}");

    public static readonly DiagnosticDescriptor ScopeOrDisposableDropped = Rule(
        "MNL106", "Lock scope or Manaloc disposable never disposed",
        "'{0}' {1}");

    public static readonly DiagnosticDescriptor ThreadAffineEscapes = Rule(
        "MNL107", "Thread-affine heap used on another thread",
        "'{0}' {1}");

    public static readonly DiagnosticDescriptor DefaultHandleUsed = Rule(
        "MNL108", "Default record handle used",
        "'{0}' {1}");

    public static readonly DiagnosticDescriptor MovingViewKept = Rule(
        "MNL109", "Moving record view kept beyond the move that positioned it",
        "'{0}' {1}");

    private static DiagnosticDescriptor Rule(string id, string title, string message) => new(
        id, title, message, Category, DiagnosticSeverity.Warning, isEnabledByDefault: true,
        helpLinkUri: HelpBase + id.ToLowerInvariant());
}
