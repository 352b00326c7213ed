namespace Manaloc.Pooling;

/// <summary>How pools and buffer managers name themselves in messages and <c>ToString</c>: <c>SemiLocalPool&lt;Order&gt; 'orders'</c>.</summary>
internal static class PoolText
{
    /// <summary><paramref name="kind"/> with the pooled type as C# writes it: <c>SemiLocalPool&lt;List&lt;Int32&gt;&gt;</c>, <c>SemiLocalPool&lt;byte[]&gt;</c>.</summary>
    public static string Kind(string kind, Type pooled) => $"{kind}<{TypeName(pooled)}>";

    /// <summary>A type's short name with its generic arguments (no namespaces: messages stay readable).</summary>
    public static string TypeName(Type type)
    {
        if (type == typeof(byte)) return "byte";
        if (type.IsArray) return TypeName(type.GetElementType()!) + "[" + new string(',', type.GetArrayRank() - 1) + "]";
        if (!type.IsGenericType) return type.Name;
        string name = type.Name;
        int tick = name.IndexOf('`', StringComparison.Ordinal);
        if (tick >= 0) name = name[..tick];
        return name + "<" + string.Join(", ", type.GetGenericArguments().Select(TypeName)) + ">";
    }

    /// <summary>The <c>ToString</c> of a pool: <c>SemiLocalPool&lt;Order&gt; 'orders' (12 retained)</c>, or <c>(disposed)</c>.</summary>
    public static string Describe(string kind, string name, bool disposed, long retained)
        => disposed ? $"{kind} '{name}' (disposed)" : $"{kind} '{name}' ({retained} retained)";

    /// <summary>As <see cref="Describe(string, string, bool, long)"/>, with a count of parts first: <c>(2 categories, 12 retained)</c>.</summary>
    public static string Describe(string kind, string name, bool disposed, long retained, string parts, int count)
        => disposed ? $"{kind} '{name}' (disposed)" : $"{kind} '{name}' ({count} {parts}, {retained} retained)";
}

/// <summary>What a semi-local pool does with a return of an object its thread's stack already holds.</summary>
internal enum DuplicateReturns
{
    /// <summary>Object pools: throw <see cref="InvalidOperationException"/> (and raise the DoubleReturn event).</summary>
    Throw,

    /// <summary>The buffer manager's tiers (the <c>ArrayPool</c> contract does not throw there): keep it once, count a drop, raise the event.</summary>
    Refuse,

    /// <summary>No check: only for the lab's and benchmarks' measurement of what the check costs.</summary>
    Unchecked,
}
