using Microsoft.CodeAnalysis;

namespace Manaloc.Generators;

/// <summary>Every shape the generator refuses, one id each (documented in docs/memory.md, "Compile-time records").</summary>
internal static class Diagnostics
{
    private const string Category = "Manaloc.NativeRecord";

    /// <summary>Where every id is explained: the design notes are not in the package, so the link is the repository's.</summary>
    private const string HelpLink = "https://github.com/manaloc/manaloc/blob/main/docs/memory.md#compile-time-records";

    private static DiagnosticDescriptor Error(string id, string title, string message)
        => new(id, title, message, Category, DiagnosticSeverity.Error, isEnabledByDefault: true, helpLinkUri: HelpLink);

    public static readonly DiagnosticDescriptor NotPublic = Error("MNL001",
        "Native record interface is not public",
        "'{0}' cannot be a native record: {1} is not public");

    public static readonly DiagnosticDescriptor Generic = Error("MNL002",
        "Native record interface is generic",
        "'{0}' cannot be a native record: {1} is generic; declare a non-generic interface (base interfaces may be closed generics)");

    public static readonly DiagnosticDescriptor Method = Error("MNL003",
        "Native record interface declares a method",
        "'{0}' cannot be a native record: member '{1}' is a method; a native record has only properties");

    public static readonly DiagnosticDescriptor Event = Error("MNL004",
        "Native record interface declares an event",
        "'{0}' cannot be a native record: member '{1}' is an event; a native record has only properties");

    public static readonly DiagnosticDescriptor Indexer = Error("MNL005",
        "Native record interface declares an indexer",
        "'{0}' cannot be a native record: member '{1}' is an indexer; a native record has only plain properties");

    public static readonly DiagnosticDescriptor InitAccessor = Error("MNL006",
        "Native record property has an init accessor",
        "'{0}' cannot be a native record: property '{1}' has an init accessor; use set (records in native memory have no construction phase)");

    public static readonly DiagnosticDescriptor NotUnmanaged = Error("MNL007",
        "Native record property type is not an unmanaged value",
        "'{0}' cannot be a native record: property '{1}' has type '{2}', {3}; native records hold only unmanaged values");

    public static readonly DiagnosticDescriptor NotAbstract = Error("MNL008",
        "Native record property is static or has a body",
        "'{0}' cannot be a native record: property '{1}' {2}; a native record's properties are abstract instance properties");

    public static readonly DiagnosticDescriptor RefProperty = Error("MNL009",
        "Native record property returns by reference",
        "'{0}' cannot be a native record: property '{1}' returns by reference");

    public static readonly DiagnosticDescriptor NonPublicMember = Error("MNL010",
        "Native record member is not public",
        "'{0}' cannot be a native record: member '{1}' is {2}; every member must be public");

    public static readonly DiagnosticDescriptor BadOffset = Error("MNL011",
        "Invalid record layout attribute",
        "'{0}' cannot be a native record: property '{1}': {2}");

    public static readonly DiagnosticDescriptor TooLarge = Error("MNL012",
        "Native record is too large",
        "'{0}' cannot be a native record: property '{1}': {2}");

    public static readonly DiagnosticDescriptor UnknownLayout = Error("MNL013",
        "Property type's layout is not known at compile time",
        "'{0}' cannot be a native record: property '{1}' has type '{2}', whose layout the generator cannot compute ({3}); use primitives, enums, the listed System types or sequential structs");

    public static readonly DiagnosticDescriptor HandleNameTaken = Error("MNL014",
        "Two native records would get the same struct handle name",
        "'{0}' cannot be a native record here: its struct handle '{1}' would have the name of '{2}''s in the same namespace; rename one of the interfaces");

    public static readonly DiagnosticDescriptor GetOnly = Error("MNL015",
        "Native record property has no setter",
        "'{0}' cannot be a native record: property '{1}' has only a getter, so nothing could ever write it and it would always read zero; add a set accessor");

    public static readonly DiagnosticDescriptor HandleNameExists = Error("MNL016",
        "A type already has the name of the native record's struct handle",
        "'{0}' cannot be a native record here: the generated struct handle '{1}' would have the name of the existing {3} '{2}'; rename the interface or that type");
}
