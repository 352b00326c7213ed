using System.Text;
using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>A char key's UTF-8 bytes: the ASCII narrowing and the full encoding give the bytes UTF-8 defines.</summary>
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

    [Fact]
    public void A_lone_surrogate_after_ASCII_chars_is_refused_at_its_index()
    {
        string key = new string('a', 33) + "\uD800b";
        var e = Assert.Throws<ArgumentException>(() =>
        {
            using var utf8 = new Utf8Key(key, stackalloc byte[256]);
        });
        Assert.Contains("lone surrogate at index 33", e.Message);
    }
}
