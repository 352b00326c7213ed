using System.Collections;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Manaloc.Lab.Harness;

/// <summary>
/// A measurement's parameters (<see cref="Measurement.Parameters"/>): typed values by name, e.g. <c>size</c> = 4096,
/// <c>op</c> = "scan". Experiments read them with typed accessors (<see cref="Int"/>, <see cref="Text"/>, …) and
/// match them with <see cref="Is"/>; nothing parses text back into numbers. They become text only in the report,
/// in <see cref="Key"/> and in results.json, where each is a string as it always was (<c>"size": "4096"</c>).
/// </summary>
/// <remarks>Immutable: <see cref="With"/> and <see cref="Without"/> return new sets. Safe to share between threads.</remarks>
[JsonConverter(typeof(ParametersJsonConverter))]
public sealed class Parameters : IReadOnlyCollection<KeyValuePair<string, ParameterValue>>
{
    private readonly SortedDictionary<string, ParameterValue> _values;

    private Parameters(SortedDictionary<string, ParameterValue> values) => _values = values;

    /// <summary>No parameters.</summary>
    public static Parameters None { get; } = new(new SortedDictionary<string, ParameterValue>(StringComparer.Ordinal));

    /// <summary>Parameters from name/value pairs, e.g. <c>Parameters.Of(("size", 4096), ("format", "json"))</c>.</summary>
    /// <exception cref="ArgumentException">A name is empty or given twice, a value is empty, or a text value reads as another type (pass the number, flag or time itself).</exception>
    public static Parameters Of(params (string Name, ParameterValue Value)[] pairs)
    {
        ArgumentNullException.ThrowIfNull(pairs);
        var values = new SortedDictionary<string, ParameterValue>(StringComparer.Ordinal);
        foreach (var (name, value) in pairs)
        {
            Add(values, name, value);
        }
        return new(values);
    }

    /// <summary>How many parameters there are.</summary>
    public int Count => _values.Count;

    /// <summary>The parameters' names, sorted.</summary>
    public IEnumerable<string> Names => _values.Keys;

    /// <summary>The value of <paramref name="name"/>.</summary>
    /// <exception cref="KeyNotFoundException">There is no such parameter.</exception>
    public ParameterValue this[string name]
        => _values.TryGetValue(name, out var value) ? value : throw new KeyNotFoundException($"No parameter '{name}' among ({Describe()}).");

    /// <summary>True when there is a parameter <paramref name="name"/>.</summary>
    public bool Contains(string name) => _values.ContainsKey(name);

    /// <summary>The value of <paramref name="name"/>, if there is one.</summary>
    public bool TryGetValue(string name, out ParameterValue value) => _values.TryGetValue(name, out value);

    /// <summary>True when <paramref name="name"/> is present and equal to <paramref name="value"/> (typed: numbers as numbers, text as text).</summary>
    public bool Is(string name, ParameterValue value) => _values.TryGetValue(name, out var v) && v == value;

    /// <summary>The whole number <paramref name="name"/>, checked to fit an <see cref="int"/>.</summary>
    /// <exception cref="KeyNotFoundException">There is no such parameter.</exception>
    /// <exception cref="InvalidOperationException">It is not a whole number that fits.</exception>
    public int Int(string name) => Read(name, v => v.AsInt());

    /// <summary>The whole number <paramref name="name"/>.</summary>
    /// <exception cref="KeyNotFoundException">There is no such parameter.</exception>
    /// <exception cref="InvalidOperationException">It is not a whole number.</exception>
    public long Long(string name) => Read(name, v => v.AsLong());

    /// <summary>The number <paramref name="name"/>, whole or real.</summary>
    /// <exception cref="KeyNotFoundException">There is no such parameter.</exception>
    /// <exception cref="InvalidOperationException">It is not a number.</exception>
    public double Double(string name) => Read(name, v => v.AsDouble());

    /// <summary>The text <paramref name="name"/>.</summary>
    /// <exception cref="KeyNotFoundException">There is no such parameter.</exception>
    /// <exception cref="InvalidOperationException">It is not text.</exception>
    public string Text(string name) => Read(name, v => v.AsText());

    /// <summary>The flag <paramref name="name"/>.</summary>
    /// <exception cref="KeyNotFoundException">There is no such parameter.</exception>
    /// <exception cref="InvalidOperationException">It is not true or false.</exception>
    public bool Bool(string name) => Read(name, v => v.AsBool());

    /// <summary>The length of time <paramref name="name"/>.</summary>
    /// <exception cref="KeyNotFoundException">There is no such parameter.</exception>
    /// <exception cref="InvalidOperationException">It is not a length of time.</exception>
    public TimeSpan Duration(string name) => Read(name, v => v.AsDuration());

    /// <summary>These parameters with <paramref name="name"/> set to <paramref name="value"/> (added or replaced).</summary>
    /// <exception cref="ArgumentException">The name is empty, or a text value reads as another type.</exception>
    public Parameters With(string name, ParameterValue value)
    {
        var values = new SortedDictionary<string, ParameterValue>(_values, StringComparer.Ordinal);
        values.Remove(name);
        Add(values, name, value);
        return new(values);
    }

    /// <summary>These parameters without <paramref name="name"/>.</summary>
    public Parameters Without(string name)
    {
        if (!_values.ContainsKey(name)) return this;
        var values = new SortedDictionary<string, ParameterValue>(_values, StringComparer.Ordinal);
        values.Remove(name);
        return new(values);
    }

    /// <summary>The parameters as a stable <c>k=v, k=v</c> text, sorted by name: what tells measurements' cells apart.</summary>
    /// <remarks>
    /// Formed once (a benign race: every thread forms the same text): the parameters never change after construction,
    /// and metrics match cells by it on every bootstrap replicate, a thousand per figure.
    /// </remarks>
    public string Key => _key ??= string.Join(", ", _values.Select(p => $"{p.Key}={p.Value}"));
    private string? _key;

    /// <inheritdoc cref="Key"/>
    public override string ToString() => Key;

    /// <inheritdoc/>
    public IEnumerator<KeyValuePair<string, ParameterValue>> GetEnumerator() => _values.GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    private T Read<T>(string name, Func<ParameterValue, T> read)
    {
        var value = this[name];
        try
        {
            return read(value);
        }
        catch (InvalidOperationException e)
        {
            throw new InvalidOperationException($"Parameter '{name}': {e.Message}", e);
        }
    }

    private string Describe() => Count == 0 ? "none" : Key;

    private static void Add(SortedDictionary<string, ParameterValue> values, string name, ParameterValue value)
    {
        if (string.IsNullOrWhiteSpace(name)) throw new ArgumentException("A parameter needs a name.", nameof(name));
        if (value.IsEmpty) throw new ArgumentException($"Parameter '{name}' has no value.", nameof(value));
        // Text that is exactly how a number, a flag or a time is written would come back from JSON as that type and
        // stop matching the text an experiment looks for: such a value must be given as what it is.
        if (value.Kind == ParameterKind.Text && ParameterValue.Parse(value.ToString()).Kind != ParameterKind.Text)
        {
            throw new ArgumentException($"Parameter '{name}' is the text '{value}', which reads as a {ParameterValue.Parse(value.ToString()).Kind.ToString().ToLowerInvariant()}: pass the value itself, not its text.", nameof(value));
        }
        if (!values.TryAdd(name, value)) throw new ArgumentException($"Parameter '{name}' is given twice.", nameof(name));
    }

    /// <summary>Reads and writes parameters as a JSON object of strings: <c>{"size": "4096", "op": "scan"}</c>.</summary>
    internal sealed class ParametersJsonConverter : JsonConverter<Parameters>
    {
        public override Parameters Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
        {
            if (reader.TokenType != JsonTokenType.StartObject) throw new JsonException("Parameters are a JSON object of strings.");
            var values = new SortedDictionary<string, ParameterValue>(StringComparer.Ordinal);
            while (reader.Read() && reader.TokenType != JsonTokenType.EndObject)
            {
                string name = reader.GetString() ?? throw new JsonException("A parameter without a name.");
                reader.Read();
                string text = reader.TokenType == JsonTokenType.String ? reader.GetString()! : throw new JsonException($"Parameter '{name}' is not a string.");
                if (!values.TryAdd(name, ParameterValue.Parse(text))) throw new JsonException($"Parameter '{name}' is given twice.");
            }
            return values.Count == 0 ? None : new Parameters(values);
        }

        public override void Write(Utf8JsonWriter writer, Parameters value, JsonSerializerOptions options)
        {
            writer.WriteStartObject();
            foreach (var (name, v) in value._values) writer.WriteString(name, v.ToString());
            writer.WriteEndObject();
        }
    }
}
