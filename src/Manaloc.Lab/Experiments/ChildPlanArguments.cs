namespace Manaloc.Lab.Experiments;

/// <summary>The checks every child plan's <c>Parse</c> makes first: how many arguments, and a known variant first.</summary>
internal static class ChildPlanArguments
{
    /// <summary>
    /// Throws unless <paramref name="arguments"/> holds one argument per name of <paramref name="names"/> and the first
    /// (the variant) is one of <paramref name="variants"/>; the messages name <paramref name="child"/>'s kind.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="arguments"/> is null.</exception>
    /// <exception cref="ArgumentException">Another count of arguments, or an unknown variant.</exception>
    public static void Check(IReadOnlyList<string> arguments, string child, IReadOnlyList<string> names, IReadOnlyList<string> variants)
    {
        ArgumentNullException.ThrowIfNull(arguments);
        if (arguments.Count != names.Count)
        {
            throw new ArgumentException($"A {child} child takes {names.Count} arguments ({string.Join(", ", names)}), not {arguments.Count}: '{string.Join(' ', arguments)}'.", nameof(arguments));
        }
        if (!variants.Contains(arguments[0]))
        {
            throw new ArgumentException($"Unknown {child} variant '{arguments[0]}'; known: {string.Join(", ", variants)}.", nameof(arguments));
        }
    }
}
