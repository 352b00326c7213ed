namespace Manaloc.Platform;

/// <summary>Turns affinity masks and Linux processor lists into processor numbers.</summary>
/// <remarks>Pure functions, safe from any thread.</remarks>
internal static class AffinityMask
{
    /// <summary>Processor numbers set in a kernel mask (bit <c>i % 8</c> of byte <c>i / 8</c> is processor <c>i</c>), ascending.</summary>
    public static int[] ToProcessors(ReadOnlySpan<byte> mask)
    {
        var result = new List<int>();
        for (int i = 0; i < mask.Length; i++)
        {
            int b = mask[i];
            while (b != 0)
            {
                int bit = System.Numerics.BitOperations.TrailingZeroCount(b);
                result.Add((i * 8) + bit);
                b &= b - 1;
            }
        }
        return result.ToArray();
    }

    /// <summary>Processor numbers set in a 64-bit mask of processor group <paramref name="group"/>, numbered <c>group * 64 + bit</c>.</summary>
    public static int[] ToProcessors(ulong mask, int group)
    {
        var result = new int[System.Numerics.BitOperations.PopCount(mask)];
        int n = 0;
        while (mask != 0)
        {
            result[n++] = (group * 64) + System.Numerics.BitOperations.TrailingZeroCount(mask);
            mask &= mask - 1;
        }
        return result;
    }

    /// <summary>
    /// Parses a Linux processor list such as <c>0-3,8,10-11</c> (the format of
    /// <c>/sys/devices/system/cpu/online</c>). Returns null when the text is not one.
    /// </summary>
    public static int[]? ParseList(string text)
    {
        var result = new SortedSet<int>();
        string trimmed = text.Trim();
        if (trimmed.Length == 0)
        {
            return [];
        }
        foreach (string part in trimmed.Split(','))
        {
            int dash = part.IndexOf('-', StringComparison.Ordinal);
            if (dash < 0)
            {
                if (!TryParseCpu(part, out int single)) return null;
                result.Add(single);
                continue;
            }
            if (!TryParseCpu(part[..dash], out int first) || !TryParseCpu(part[(dash + 1)..], out int last) || last < first || last - first > 1 << 20)
            {
                return null;
            }
            for (int cpu = first; cpu <= last; cpu++) result.Add(cpu);
        }
        return result.ToArray();
    }

    private static bool TryParseCpu(string text, out int cpu)
        => int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out cpu);
}
