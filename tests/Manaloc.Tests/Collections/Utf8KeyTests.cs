using System.Text;
using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>
/// A char key's UTF-8 bytes: the ASCII narrowing and the full encoding give the bytes UTF-8 defines; a lone surrogate
/// gives its generalized UTF-8 (WTF-8) form, and no two keys share bytes.
/// </summary>
public sealed class Utf8KeyTests
{
    public static TheoryData<string> Keys => new()
    {
        "",
        "k",
        "user:0000001234:profile-settings", // ASCII: narrowed
        new string('a', 40) + "é",           // ASCII for a vector's width and more, then not: encoded in full
        "é" + new string('a', 40),
        new string('z', 15) + "日本" + new string('z', 20),
        "emoji-\U0001F600-key",
    };

    [Theory]
    [MemberData(nameof(Keys))]
    public void The_bytes_are_the_keys_UTF_8_encoding(string key)
    {
        using var utf8 = new Utf8Key(key, stackalloc byte[256]);
        Assert.Equal(Encoding.UTF8.GetBytes(key), utf8.Bytes.ToArray());
    }

    // By index: xUnit writes a test case's string arguments as UTF-8, where lone surrogates become one replacement char,
    // so cases that differ only in them would share an ID and one would be skipped.
    private static readonly string[] s_keysWithLoneSurrogates =
    [
        "\uD800",
        "\uDFFF",
        "ab\uD800",                                  // a high surrogate ending the key
        "\uDC00ab",                                  // a low surrogate first
        "\uDC00\uD800",                              // a pair in the wrong order: two lone surrogates
        "\uD800\uD800\uDC00",                        // a lone high surrogate, then a pair
        new string('a', 33) + "\uD800b",             // after ASCII for a vector's width and more
        "é\uDBFF日本\uDC01\U0001F600",
        new string('x', 100) + "\uDABC" + new string('y', 100), // above the stack buffer: a rented one
    ];

    public static TheoryData<int> KeysWithLoneSurrogates => new(Enumerable.Range(0, s_keysWithLoneSurrogates.Length));

    [Theory]
    [MemberData(nameof(KeysWithLoneSurrogates))]
    public void A_key_with_lone_surrogates_is_its_generalized_UTF_8_encoding(int index)
    {
        string key = s_keysWithLoneSurrogates[index];
        using var utf8 = new Utf8Key(key, key.Length <= 85 ? stackalloc byte[256] : default);
        Assert.Equal(Wtf8(key), utf8.Bytes.ToArray());
    }

    [Theory]
    [MemberData(nameof(Keys))]
    public void A_valid_key_s_bytes_are_also_the_reference_s(string key)
    {
        using var utf8 = new Utf8Key(key, stackalloc byte[256]);
        Assert.Equal(Wtf8(key), utf8.Bytes.ToArray());
    }

    [Fact]
    public void A_lone_surrogate_is_its_three_byte_form()
    {
        using var high = new Utf8Key("a\uD800", stackalloc byte[256]);
        Assert.Equal(new byte[] { 0x61, 0xED, 0xA0, 0x80 }, high.Bytes.ToArray());
        using var low = new Utf8Key("\uDFFF", stackalloc byte[256]);
        Assert.Equal(new byte[] { 0xED, 0xBF, 0xBF }, low.Bytes.ToArray());
    }

    [Fact]
    public void Different_keys_never_share_bytes()
    {
        // Every key of up to three chars over chars whose encodings sit next to each other's: the replacement char (what
        // a lossy encoder would write for a lone surrogate), the chars just below and above the surrogates, both ends
        // of each surrogate half.
        char[] chars = ['a', 'é', '\uD7FF', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uE000', '\uFFFD'];
        var keys = new List<string> { "" };
        for (int length = 1, from = 0; length <= 3; length++)
        {
            int to = keys.Count;
            for (int i = from; i < to; i++)
                foreach (char c in chars) keys.Add(keys[i] + c);
            from = to;
        }
        var seen = new Dictionary<string, string>();
        Span<byte> stack = stackalloc byte[256];
        foreach (string key in keys)
        {
            using var utf8 = new Utf8Key(key, stack);
            string bytes = Convert.ToHexString(utf8.Bytes);
            Assert.True(seen.TryAdd(bytes, key), $"{Escaped(key)} and {(seen.TryGetValue(bytes, out var other) ? Escaped(other) : "")} share {bytes}");
        }
        Assert.Equal(1 + 9 + 81 + 729, seen.Count);
    }

    private static string Escaped(string key) => string.Concat(key.Select(c => $"\\u{(int)c:X4}"));

    /// <summary>The reference: each code point (a surrogate pair combined, a lone surrogate as itself) in UTF-8's 1 to 4 bytes.</summary>
    private static byte[] Wtf8(string key)
    {
        var bytes = new List<byte>();
        for (int i = 0; i < key.Length; i++)
        {
            int c = key[i];
            if (char.IsHighSurrogate(key[i]) && i + 1 < key.Length && char.IsLowSurrogate(key[i + 1])) c = char.ConvertToUtf32(key[i], key[++i]);
            if (c < 0x80) bytes.Add((byte)c);
            else if (c < 0x800) bytes.AddRange([(byte)(0xC0 | (c >> 6)), (byte)(0x80 | (c & 0x3F))]);
            else if (c < 0x10000) bytes.AddRange([(byte)(0xE0 | (c >> 12)), (byte)(0x80 | ((c >> 6) & 0x3F)), (byte)(0x80 | (c & 0x3F))]);
            else bytes.AddRange([(byte)(0xF0 | (c >> 18)), (byte)(0x80 | ((c >> 12) & 0x3F)), (byte)(0x80 | ((c >> 6) & 0x3F)), (byte)(0x80 | (c & 0x3F))]);
        }
        return [.. bytes];
    }
}
