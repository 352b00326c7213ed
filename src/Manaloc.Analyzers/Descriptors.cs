using System.Resources;

namespace Manaloc.Analyzers;

/// <summary>The MNL1xx rules. Titles, message formats and descriptions come from Resources.resx; every message names the
/// variable; every rule links to its section of docs/analyzers.md.</summary>
internal static class Descriptors
{
    private const string Category = "Reliability";
    private const string HelpBase = "https://github.com/manaloc/manaloc/blob/main/docs/analyzers.md#";

    /// <summary>The analyzer's strings (Resources.resx, embedded as Manaloc.Analyzers.Resources.resources).</summary>
    internal static readonly ResourceManager Strings = new("Manaloc.Analyzers.Resources", typeof(Descriptors).Assembly);

    /// <summary>A reason (the message's second argument) from the resources, formatted with its arguments in the culture
    /// the message is shown in.</summary>
    public static LocalizableString Text(string key, params object?[] args)
    {
        var formatted = new string[args.Length];
        for (int i = 0; i < args.Length; i++) formatted[i] = args[i]?.ToString() ?? "";
        return new LocalizableResourceString(key, Strings, typeof(Descriptors), formatted);
    }

    public static readonly DiagnosticDescriptor RentedNotReturned = Rule("MNL101");
    public static readonly DiagnosticDescriptor ReturnedTwiceOrUsedAfterReturn = Rule("MNL102");
    public static readonly DiagnosticDescriptor BufferOwnerMisuse = Rule("MNL103");
    public static readonly DiagnosticDescriptor PooledObjectMisuse = Rule("MNL104");
    public static readonly DiagnosticDescriptor TypedMemoryMisuse = Rule("MNL105");
    public static readonly DiagnosticDescriptor ScopeOrDisposableDropped = Rule("MNL106");
    public static readonly DiagnosticDescriptor ThreadAffineEscapes = Rule("MNL107");
    public static readonly DiagnosticDescriptor DefaultHandleUsed = Rule("MNL108");
    public static readonly DiagnosticDescriptor MovingViewKept = Rule("MNL109");
    public static readonly DiagnosticDescriptor PooledMemoryEscapes = Rule("MNL110");

    /// <summary>A release that only an exception skips: the pool loses a slot (the GC collects the array), nothing is
    /// corrupted, and .NET's own code returns outside finally on purpose, so it is a suggestion, not a warning.</summary>
    public static readonly DiagnosticDescriptor ReleaseSkippedByException = Rule("MNL111", DiagnosticSeverity.Info);

    public static readonly DiagnosticDescriptor MovingViewAcrossAwait = Rule("MNL112");

    private static DiagnosticDescriptor Rule(string id, DiagnosticSeverity severity = DiagnosticSeverity.Warning) => new(
        id,
        new LocalizableResourceString(id + "Title", Strings, typeof(Descriptors)),
        new LocalizableResourceString(id + "Message", Strings, typeof(Descriptors)),
        Category, severity, isEnabledByDefault: true,
        description: new LocalizableResourceString(id + "Description", Strings, typeof(Descriptors)),
        helpLinkUri: HelpBase + id.ToLowerInvariant());
}
