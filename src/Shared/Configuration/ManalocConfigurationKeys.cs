using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using Microsoft.Extensions.Configuration;

namespace Manaloc.Configuration;

/// <summary>
/// Finds the configuration keys under <c>Manaloc:</c> that no registration of the host reads, so a misspelled key
/// (<c>Manaloc:MemoryPool:BlockSzie</c>) fails the start naming it instead of leaving the default in place silently.
/// </summary>
/// <remarks>
/// Two walks, so each key is reported once: <see cref="InSection"/> walks one registration's section against its options
/// type's bindable properties (recursively, as the configuration binder binds them), reporting there too the values that
/// do not convert; <see cref="OutsideSections"/> walks
/// the rest of <c>Manaloc:</c> against the sections the host's registrations read.
/// Keys match case-insensitively, as configuration keys do. A key with no value (an empty JSON object) sets nothing
/// and is not reported. Runs once per options instance when the host starts, never on a request.
/// </remarks>
internal static class ManalocConfigurationKeys
{
    /// <summary>The root of every section the packages read.</summary>
    public const string Root = "Manaloc";

    /// <summary>
    /// Every package's fixed sections and the registration that reads each, for the hint on a key of one the host does not
    /// register (the host may not reference that package: names, not types; each package's tests check its own rows).
    /// </summary>
    internal static readonly (string Section, string Registration)[] PackageSections =
    [
        ("Manaloc:MemoryPool", "AddManalocKestrelMemoryPool() (Manaloc.AspNetCore)"),
        ("Manaloc:ObjectPools", "AddManalocObjectPools() (Manaloc.AspNetCore)"),
        ("Manaloc:IdleRelease", "AddManalocIdleRelease() (Manaloc.AspNetCore)"),
        ("Manaloc:Cache", "AddManalocDistributedCache() (Manaloc.Caching)"),
    ];

    /// <summary>The prefix of the dispatchers' sections (<c>Manaloc:Dispatchers:{name}</c>, read by Manaloc.AspNetCore's AddDedicatedDispatcher).</summary>
    internal const string DispatchersPrefix = "Manaloc:Dispatchers";

    /// <summary>
    /// What is wrong with the section <paramref name="section"/> bound to <paramref name="options"/>, found in one walk: every
    /// key that binds to no property (<see cref="SectionProblems.UnknownKeys"/>) and every value the configuration binder
    /// cannot convert to its property (<see cref="SectionProblems.Unconvertible"/>: <c>MaxBytes = lots</c>, named with its
    /// key, its value and what the key takes).
    /// </summary>
    /// <remarks>Each value is converted by the binder itself, so exactly the values binding would throw on are reported.</remarks>
    public static SectionProblems InSection(IConfiguration configuration, string section,
        [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] Type options)
    {
        var problems = new SectionProblems([], []);
        var node = configuration.GetSection(section);
        if (node.Value is not null) problems.UnknownKeys.Add(NotRead(node.Path, $"{section} is a section ({Describe(section, options)})"));
        WalkProperties(node, options, problems);
        return problems;
    }

    /// <summary>Every key under <c>Manaloc:</c> outside the sections in <paramref name="registered"/> (each a full path, e.g. <c>Manaloc:Dispatchers:cpu</c>).</summary>
    public static List<string> OutsideSections(IConfiguration configuration, IReadOnlyCollection<string> registered)
    {
        var problems = new List<string>();
        WalkSections(configuration.GetSection(Root), registered, problems);
        return problems;
    }

    /// <summary>Whether the binder converts one value (a primitive, an enum, a time span...): it fails exactly where binding would throw.</summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Only types IsValue accepts are converted: primitives, enums and the framework's value types, which keep their converters.")]
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Only types IsValue accepts are converted, none of them generic.")]
    private static bool Converts(IConfigurationSection value, Type type)
    {
        try
        {
            _ = value.Get(type);
            return true;
        }
        catch (InvalidOperationException)
        {
            return false;
        }
    }

    /// <summary>What a value of <paramref name="type"/> is, as a message says it: "a whole number (Int64)", "true or false".</summary>
    private static string Expected(Type type)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        if (type == typeof(bool)) return "true or false";
        if (type.IsEnum) return $"one of {string.Join(", ", Enum.GetNames(type))}";
        if (type == typeof(TimeSpan)) return "a time span ([d.]hh:mm:ss[.fffffff], such as 00:00:30)";
        if (type == typeof(double) || type == typeof(float) || type == typeof(decimal)) return $"a number ({type.Name}, invariant culture)";
        if (type.IsPrimitive && type != typeof(char)) return $"a whole number in the range of {type.Name}";
        return $"a {type.Name}";
    }

    private static void WalkSections(IConfigurationSection node, IReadOnlyCollection<string> registered, List<string> problems)
    {
        foreach (var child in node.GetChildren())
        {
            if (registered.Any(s => string.Equals(s, child.Path, StringComparison.OrdinalIgnoreCase))) continue; // InSection's
            bool onTheWay = registered.Any(s => s.StartsWith(child.Path + ConfigurationPath.KeyDelimiter, StringComparison.OrdinalIgnoreCase));
            if (onTheWay)
            {
                if (child.Value is not null) problems.Add(NotRead(child.Path, $"{child.Path} is a section"));
                WalkSections(child, registered, problems);
            }
            else
            {
                string hint = $"{node.Path} has {Children(node.Path, registered)}{Unregistered(child.Path)}";
                ReportAll(child, hint, problems);
            }
        }
    }

    /// <summary>The names of the sections one level under <paramref name="path"/> that some registration reads.</summary>
    private static string Children(string path, IReadOnlyCollection<string> registered)
        => string.Join(", ", registered
            .Where(s => s.StartsWith(path + ConfigurationPath.KeyDelimiter, StringComparison.OrdinalIgnoreCase))
            .Select(s => s[(path.Length + 1)..].Split(ConfigurationPath.KeyDelimiter)[0])
            .Distinct(StringComparer.OrdinalIgnoreCase));

    /// <summary>When <paramref name="path"/> is in a section of a package that the host does not register: which registration reads it.</summary>
    private static string Unregistered(string path)
    {
        foreach (var (section, registration) in PackageSections)
        {
            if (IsUnder(path, section)) return $"; {section} is read by {registration}, which this host does not call";
        }
        string dispatchers = DispatchersPrefix + ConfigurationPath.KeyDelimiter;
        if (path.StartsWith(dispatchers, StringComparison.OrdinalIgnoreCase))
        {
            string name = path[dispatchers.Length..].Split(ConfigurationPath.KeyDelimiter)[0];
            return $"; {dispatchers}{name} is read by AddDedicatedDispatcher(\"{name}\"), which this host does not call";
        }
        return "";
    }

    private static bool IsUnder(string path, string section)
        => string.Equals(path, section, StringComparison.OrdinalIgnoreCase)
        || path.StartsWith(section + ConfigurationPath.KeyDelimiter, StringComparison.OrdinalIgnoreCase);

    /// <summary>Matches each key under <paramref name="node"/> to a bindable property of <paramref name="type"/>, reporting both kinds of problem as it goes.</summary>
    private static void WalkProperties(IConfigurationSection node, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] Type type, SectionProblems problems)
    {
        foreach (var child in node.GetChildren())
        {
            var property = Bindable(type).FirstOrDefault(p => string.Equals(KeyOf(p), child.Key, StringComparison.OrdinalIgnoreCase));
            if (property is null)
            {
                ReportAll(child, Describe(node.Path, type), problems.UnknownKeys);
            }
            else if (IsCodeOnly(property.PropertyType))
            {
                ReportAll(child, $"{property.Name} is set in code only ({type.Name}.{property.Name})", problems.UnknownKeys);
            }
            else if (IsValue(property.PropertyType))
            {
                foreach (var below in child.GetChildren()) ReportAll(below, $"{child.Path} is a value, not a section", problems.UnknownKeys);
                if (child.Value is { } value && !Converts(child, property.PropertyType))
                    problems.Unconvertible.Add($"{child.Path} is '{value}', which is not {Expected(property.PropertyType)}.");
            }
            else
            {
                WalkNested(child, property, problems);
            }
        }
    }

    [UnconditionalSuppressMessage("Trimming", "IL2072", Justification = "A nested options type is bound by the configuration binder, which keeps its public properties.")]
    private static void WalkNested(IConfigurationSection node, PropertyInfo property, SectionProblems problems)
        => WalkProperties(node, property.PropertyType, problems);

    /// <summary>"Manaloc:MemoryPool has BlockSize, Pinned, Diagnostics": the keys <paramref name="type"/> takes at <paramref name="path"/>.</summary>
    private static string Describe(string path, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] Type type)
        => $"{path} has {string.Join(", ", Bindable(type).Where(p => !IsCodeOnly(p.PropertyType)).Select(KeyOf))}";

    /// <summary>A property configuration cannot set: a delegate or a clock (<see cref="TimeProvider"/>), set in code only.</summary>
    private static bool IsCodeOnly(Type type) => typeof(Delegate).IsAssignableFrom(type) || typeof(TimeProvider).IsAssignableFrom(type);

    /// <summary>The properties the configuration binder sets: public, instance, not indexers, with a public setter (or a getter of an object it fills).</summary>
    private static IEnumerable<PropertyInfo> Bindable([DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] Type type)
        => type.GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.GetIndexParameters().Length == 0 && (p.SetMethod?.IsPublic == true || (p.GetMethod?.IsPublic == true && !IsValue(p.PropertyType))));

    private static string KeyOf(PropertyInfo property) => property.GetCustomAttribute<ConfigurationKeyNameAttribute>()?.Name ?? property.Name;

    /// <summary>A type the binder converts from one string (no keys below it).</summary>
    private static bool IsValue(Type type)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        return type.IsPrimitive || type.IsEnum || type == typeof(string) || type == typeof(decimal) || type == typeof(TimeSpan)
            || type == typeof(DateTime) || type == typeof(DateTimeOffset) || type == typeof(Guid) || type == typeof(Uri);
    }

    /// <summary>Reports <paramref name="node"/> and every key under it that has a value.</summary>
    private static void ReportAll(IConfigurationSection node, string hint, List<string> problems)
    {
        if (node.Value is not null) problems.Add(NotRead(node.Path, hint));
        foreach (var child in node.GetChildren()) ReportAll(child, hint, problems);
    }

    private static string NotRead(string key, string hint) => $"{key} is not a setting Manaloc reads: {hint}.";
}

/// <summary>What one walk of a section found: keys that bind to no property, and values the binder cannot convert.</summary>
internal readonly record struct SectionProblems(List<string> UnknownKeys, List<string> Unconvertible)
{
    /// <summary>Whether the section binds as written (no unknown key, every value converts).</summary>
    public bool None => UnknownKeys.Count == 0 && Unconvertible.Count == 0;
}
