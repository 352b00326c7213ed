using System.Text.Json;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>Parameters keep their types: typed reads, typed equality, text only in JSON and the key, and back typed from JSON.</summary>
public sealed class ParametersTests
{
    [Fact]
    public void Values_read_back_as_the_types_they_were_given()
    {
        var p = Parameters.Of(("size", 4096), ("records", 10_000_000_000L), ("share", 0.25), ("op", "scan"), ("pinned", true), ("idle", TimeSpan.FromSeconds(1.5)));
        Assert.Equal(4096, p.Int("size"));
        Assert.Equal(10_000_000_000L, p.Long("records"));
        Assert.Equal(0.25, p.Double("share"));
        Assert.Equal(4096.0, p.Double("size")); // a whole number is a number too
        Assert.Equal("scan", p.Text("op"));
        Assert.True(p.Bool("pinned"));
        Assert.Equal(TimeSpan.FromSeconds(1.5), p.Duration("idle"));
        Assert.Equal("idle=00:00:01.5000000, op=scan, pinned=true, records=10000000000, share=0.25, size=4096", p.Key);
    }

    [Fact]
    public void Equality_is_typed_numbers_by_value_and_text_never_equal_to_a_number()
    {
        var p = Parameters.Of(("size", 2), ("op", "scan"));
        Assert.True(p.Is("size", 2));
        Assert.True(p.Is("size", 2L));
        Assert.True(p.Is("size", 2.0));
        Assert.False(p.Is("size", 3));
        Assert.False(p["size"] == "2"); // the text "2" is not the number 2
        Assert.True(p["op"] == "scan");
        Assert.False(p.Is("missing", 2));
        Assert.Equal(((ParameterValue)2).GetHashCode(), ((ParameterValue)2.0).GetHashCode());
    }

    [Fact]
    public void Reading_the_wrong_type_or_a_missing_name_says_which_parameter()
    {
        var p = Parameters.Of(("op", "scan"), ("big", long.MaxValue));
        var wrong = Assert.Throws<InvalidOperationException>(() => p.Int("op"));
        Assert.Contains("'op'", wrong.Message);
        Assert.Contains("'scan'", wrong.Message);
        Assert.Throws<InvalidOperationException>(() => p.Int("big")); // does not fit an int
        var missing = Assert.Throws<KeyNotFoundException>(() => p.Int("size"));
        Assert.Contains("'size'", missing.Message);
        Assert.Contains("op=scan", missing.Message);
    }

    [Fact]
    public void Bad_parameters_are_refused_with_their_name()
    {
        Assert.Contains("'size'", Assert.Throws<ArgumentException>(() => Parameters.Of(("size", "4096"))).Message); // the number's text: pass the number
        Assert.Contains("'on'", Assert.Throws<ArgumentException>(() => Parameters.Of(("on", "true"))).Message);
        Assert.Contains("twice", Assert.Throws<ArgumentException>(() => Parameters.Of(("a", 1), ("a", 2))).Message);
        Assert.Throws<ArgumentException>(() => Parameters.Of(("", 1)));
        Assert.Contains("'x'", Assert.Throws<ArgumentException>(() => Parameters.Of(("x", default(ParameterValue)))).Message);
        Assert.Throws<ArgumentOutOfRangeException>(() => Parameters.Of(("x", double.NaN)));
        Assert.Equal("4096 B", Parameters.Of(("size", "4096 B")).Text("size")); // text with a unit is text
    }

    [Fact]
    public void With_and_Without_leave_the_original_unchanged()
    {
        var p = Parameters.Of(("size", 8));
        var q = p.With("threads", 2).With("size", 16);
        Assert.Equal("size=8", p.Key);
        Assert.Equal("size=16, threads=2", q.Key);
        Assert.Equal("threads=2", q.Without("size").Key);
        Assert.Same(p, p.Without("absent"));
    }

    [Fact]
    public void Json_writes_strings_as_before_and_reads_back_each_type()
    {
        var m = new Measurement
        {
            Variant = "v", Unit = "ns/op", Statistics = Statistics.From([1.0]),
            Parameters = Parameters.Of(("size", 4096), ("share", 0.25), ("op", "scan"), ("pinned", false), ("idle", TimeSpan.FromMilliseconds(100)), ("zone", "Etc/UTC")),
        };
        string json = JsonSerializer.Serialize(m, LabJson.CompactOptions);
        using (var doc = JsonDocument.Parse(json))
        {
            var p = doc.RootElement.GetProperty("parameters");
            Assert.Equal("4096", p.GetProperty("size").GetString());
            Assert.Equal("0.25", p.GetProperty("share").GetString());
            Assert.Equal("scan", p.GetProperty("op").GetString());
        }
        var back = JsonSerializer.Deserialize<Measurement>(json, LabJson.CompactOptions)!.Parameters;
        Assert.Equal(ParameterKind.Integer, back["size"].Kind);
        Assert.Equal(ParameterKind.Real, back["share"].Kind);
        Assert.Equal(ParameterKind.Text, back["op"].Kind);
        Assert.Equal(ParameterKind.Boolean, back["pinned"].Kind);
        Assert.Equal(ParameterKind.Duration, back["idle"].Kind);
        Assert.Equal(4096, back.Int("size"));
        Assert.Equal(TimeSpan.FromMilliseconds(100), back.Duration("idle"));
        Assert.Equal(m.Parameters.Key, back.Key);
        Assert.All(m.Parameters, p => Assert.True(back.Is(p.Key, p.Value), p.Key));
    }

    [Fact]
    public void Json_without_parameters_reads_as_none_and_a_non_string_value_is_refused()
    {
        Assert.Same(Parameters.None, JsonSerializer.Deserialize<Parameters>("{}", LabJson.Options));
        Assert.Contains("'size'", Assert.Throws<JsonException>(() => JsonSerializer.Deserialize<Parameters>("{\"size\": 4096}", LabJson.Options)).Message);
    }
}
