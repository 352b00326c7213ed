using System.Buffers;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Writes a child's <see cref="ChildOutput"/> as the JSON that <c>JsonSerializer</c> with <see cref="LabJson.CompactOptions"/>
/// writes for it, byte for byte, straight onto a <see cref="Utf8JsonWriter"/>. The parent reads it with that serializer.
/// </summary>
/// <remarks>
/// Every lab child writes one result, and the serializer's generic code for these types (hundreds of methods, jitted
/// afresh in each process) cost a child more CPU than anything else it does before its experiment starts;
/// <see cref="Utf8JsonWriter"/> is non-generic framework code that comes precompiled. The shape is the serializer's:
/// properties in declaration order, camelCase names, nulls written, dictionary keys as given, NaN and infinities as the
/// named literals <c>"NaN"</c>, <c>"Infinity"</c>, <c>"-Infinity"</c> (<see cref="System.Text.Json.Serialization.JsonNumberHandling.AllowNamedFloatingPointLiterals"/>),
/// parameters as an object of strings, a unit as its symbol. A test compares this writer's text with the serializer's for
/// results that set every property, so a property added to one of these types without a line here fails it.
/// The parent reads the line back with <see cref="Read"/>.
/// </remarks>
internal static class ChildOutputJson
{
    /// <summary>
    /// Reads a child's result (the JSON after the marker) with the serializer's build-time generated code for these types
    /// (<see cref="ChildOutputReading"/>), which gives what the serializer with <see cref="LabJson.Options"/> gives. A launch
    /// is a fresh process that reads its own children's results: with the serializer's run-time code, the first read
    /// emitted and jitted the accessors and converters of every type afresh, most of a CPU-second between one child and
    /// the next and in the background of the next child's measurements.
    /// </summary>
    /// <exception cref="JsonException">The text is not a child's result.</exception>
    public static ChildOutput? Read(ReadOnlySpan<char> json) => JsonSerializer.Deserialize(json, ChildOutputReading.Default.ChildOutput);

    /// <summary>The JSON of <paramref name="output"/>, on one line.</summary>
    public static string Write(ChildOutput output)
    {
        ArgumentNullException.ThrowIfNull(output);
        var buffer = new ArrayBufferWriter<byte>(4096);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            Write(writer, output);
        }
        return Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    private static void Write(Utf8JsonWriter writer, ChildOutput output)
    {
        writer.WriteStartObject();
        writer.WritePropertyName("measurements");
        WriteList(writer, output.Measurements, WriteMeasurement);
        writer.WritePropertyName("values");
        WriteMap(writer, output.Values, WriteNumberValue);
        writer.WritePropertyName("texts");
        WriteMap(writer, output.Texts, static (w, text) => w.WriteStringValue(text));
        writer.WritePropertyName("notes");
        WriteList(writer, output.Notes, static (w, note) => w.WriteStringValue(note));
        writer.WritePropertyName("tables");
        WriteList(writer, output.Tables, WriteTable);
        writer.WritePropertyName("machine");
        if (output.Machine is { } machine) WriteMachine(writer, machine);
        else writer.WriteNullValue();
        writer.WriteEndObject();
    }

    private static void WriteMeasurement(Utf8JsonWriter writer, Measurement m)
    {
        writer.WriteStartObject();
        writer.WriteString("variant", m.Variant);
        writer.WritePropertyName("parameters");
        WriteParameters(writer, m.Parameters);
        writer.WriteNumber("threads", m.Threads);
        writer.WriteString("unit", m.Unit.Symbol);
        writer.WriteBoolean("lowerIsBetter", m.LowerIsBetter);
        writer.WritePropertyName("statistics");
        WriteStatistics(writer, m.Statistics);
        writer.WriteNumber("operationsPerSample", m.OperationsPerSample);
        WriteNumber(writer, "nsPerOp", m.NsPerOp);
        WriteNumber(writer, "opsPerSecond", m.OpsPerSecond);
        WriteNumber(writer, "allocatedBytesPerOp", m.AllocatedBytesPerOp);
        writer.WriteNumber("allocatedBytes", m.AllocatedBytes);
        writer.WriteStartObject("gc");
        writer.WriteNumber("gen0", m.Gc.Gen0);
        writer.WriteNumber("gen1", m.Gc.Gen1);
        writer.WriteNumber("gen2", m.Gc.Gen2);
        writer.WriteEndObject();
        WriteNumber(writer, "gcPauseMs", m.GcPauseMs);
        writer.WriteNumber("lockContentions", m.LockContentions);
        writer.WriteNumber("peakWorkingSetBytes", m.PeakWorkingSetBytes);
        WriteNumber(writer, "ratioToBaseline", m.RatioToBaseline);
        WriteNumber(writer, "ratioLow", m.RatioLow);
        WriteNumber(writer, "ratioHigh", m.RatioHigh);
        WritePlacement(writer, m.Placement);
        writer.WritePropertyName("launches");
        WriteList(writer, m.Launches, WriteLaunch);
        WriteInteger(writer, "roundGroup", m.RoundGroup);
        writer.WritePropertyName("sampleRounds");
        WriteList(writer, m.SampleRounds, static (w, round) => w.WriteNumberValue(round));
        writer.WritePropertyName("metrics");
        WriteMap(writer, m.Metrics, WriteNumberValue);
        writer.WriteEndObject();
    }

    /// <summary>As the parameters' own converter writes them: an object of strings, sorted by name.</summary>
    private static void WriteParameters(Utf8JsonWriter writer, Parameters parameters)
    {
        writer.WriteStartObject();
        foreach (var (name, value) in parameters) writer.WriteString(name, value.ToString());
        writer.WriteEndObject();
    }

    private static void WriteStatistics(Utf8JsonWriter writer, Statistics s)
    {
        writer.WriteStartObject();
        writer.WriteNumber("count", s.Count);
        WriteNumber(writer, "median", s.Median);
        WriteNumber(writer, "mean", s.Mean);
        WriteNumber(writer, "min", s.Min);
        WriteNumber(writer, "max", s.Max);
        WriteNumber(writer, "stdDev", s.StdDev);
        WriteNumber(writer, "p10", s.P10);
        WriteNumber(writer, "p90", s.P90);
        WriteNumber(writer, "p99", s.P99);
        writer.WritePropertyName("samples");
        WriteList(writer, s.Samples, WriteNumberValue);
        writer.WriteEndObject();
    }

    private static void WriteLaunch(Utf8JsonWriter writer, LaunchFigures launch)
    {
        writer.WriteStartObject();
        writer.WriteNumber("launch", launch.Launch);
        writer.WriteNumber("sampleCount", launch.SampleCount);
        WriteNumber(writer, "median", launch.Median);
        WritePlacement(writer, launch.Placement);
        WriteNumber(writer, "allocatedBytesPerOp", launch.AllocatedBytesPerOp);
        writer.WritePropertyName("metrics");
        WriteMap(writer, launch.Metrics, WriteNumberValue);
        WriteInteger(writer, "roundGroup", launch.RoundGroup);
        writer.WriteEndObject();
    }

    private static void WriteInteger(Utf8JsonWriter writer, string name, long? value)
    {
        writer.WritePropertyName(name);
        if (value is { } v) writer.WriteNumberValue(v);
        else writer.WriteNullValue();
    }

    private static void WritePlacement(Utf8JsonWriter writer, Placement? placement)
    {
        writer.WritePropertyName("placement");
        if (placement is null)
        {
            writer.WriteNullValue();
            return;
        }
        writer.WriteStartObject();
        writer.WritePropertyName("threadCpus");
        WriteList(writer, placement.ThreadCpus, static (w, cpus) => WriteList(w, cpus, static (w2, cpu) => w2.WriteNumberValue(cpu)));
        writer.WriteBoolean("sharedCpu", placement.SharedCpu);
        writer.WritePropertyName("smtSiblings");
        if (placement.SmtSiblings is { } siblings) writer.WriteBooleanValue(siblings);
        else writer.WriteNullValue();
        writer.WriteBoolean("moved", placement.Moved);
        writer.WriteEndObject();
    }

    private static void WriteTable(Utf8JsonWriter writer, ResultTable table)
    {
        writer.WriteStartObject();
        writer.WriteString("title", table.Title);
        writer.WritePropertyName("columns");
        WriteList(writer, table.Columns, static (w, column) => w.WriteStringValue(column));
        writer.WritePropertyName("rows");
        WriteList(writer, table.Rows, static (w, row) => WriteList(w, row, static (w2, cell) => w2.WriteStringValue(cell)));
        writer.WriteEndObject();
    }

    private static void WriteMachine(Utf8JsonWriter writer, MachineInfo machine)
    {
        writer.WriteStartObject();
        writer.WriteString("os", machine.Os);
        writer.WriteString("architecture", machine.Architecture);
        writer.WriteString("runtime", machine.Runtime);
        writer.WriteNumber("processorCount", machine.ProcessorCount);
        writer.WritePropertyName("affinityProcessors");
        if (machine.AffinityProcessors is { } affinity) writer.WriteNumberValue(affinity);
        else writer.WriteNullValue();
        writer.WriteString("affinityMask", machine.AffinityMask);
        writer.WriteString("gcMode", machine.GcMode);
        writer.WriteString("gcLatencyMode", machine.GcLatencyMode);
        writer.WriteNumber("totalAvailableMemoryBytes", machine.TotalAvailableMemoryBytes);
        writer.WriteString("smtSiblings", machine.SmtSiblings);
        writer.WriteBoolean("ci", machine.Ci);
        writer.WriteBoolean("callsCountedFromStart", machine.CallsCountedFromStart);
        writer.WriteEndObject();
    }

    private static void WriteList<T>(Utf8JsonWriter writer, IReadOnlyList<T> items, Action<Utf8JsonWriter, T> writeItem)
    {
        if (items is null)
        {
            writer.WriteNullValue();
            return;
        }
        writer.WriteStartArray();
        for (int i = 0; i < items.Count; i++) writeItem(writer, items[i]);
        writer.WriteEndArray();
    }

    /// <summary>A dictionary as a JSON object, its keys as given, in its own order (as the serializer enumerates it).</summary>
    private static void WriteMap<T>(Utf8JsonWriter writer, IReadOnlyDictionary<string, T> map, Action<Utf8JsonWriter, T> writeValue)
    {
        if (map is null)
        {
            writer.WriteNullValue();
            return;
        }
        writer.WriteStartObject();
        foreach (var (name, value) in map)
        {
            writer.WritePropertyName(name);
            writeValue(writer, value);
        }
        writer.WriteEndObject();
    }

    private static void WriteNumber(Utf8JsonWriter writer, string name, double? value)
    {
        writer.WritePropertyName(name);
        if (value is { } v) WriteNumberValue(writer, v);
        else writer.WriteNullValue();
    }

    /// <summary>A finite number as a number; NaN and infinities as the serializer's named literals (strings).</summary>
    private static void WriteNumberValue(Utf8JsonWriter writer, double value)
    {
        if (double.IsFinite(value)) writer.WriteNumberValue(value);
        else if (double.IsNaN(value)) writer.WriteStringValue("NaN");
        else writer.WriteStringValue(value > 0 ? "Infinity" : "-Infinity");
    }
}

/// <summary>
/// The serializer's generated metadata for a child's result, with <see cref="LabJson.Options"/>'s settings (camelCase names,
/// NaN and infinities as named literals, nulls read), for <see cref="ChildOutputJson.Read"/>.
/// </summary>
[JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase, NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    DefaultIgnoreCondition = JsonIgnoreCondition.Never)]
[JsonSerializable(typeof(ChildOutput))]
internal sealed partial class ChildOutputReading : JsonSerializerContext;
