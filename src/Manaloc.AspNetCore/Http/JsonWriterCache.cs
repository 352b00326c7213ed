using System.Buffers;
using System.Text.Json;

namespace Manaloc.AspNetCore.Http;

/// <summary>
/// One <see cref="Utf8JsonWriter"/> per thread for <see cref="ManalocResults.Json{TValue}(TValue, System.Text.Json.Serialization.Metadata.JsonTypeInfo{TValue}, string, int, Manaloc.Buffers.BufferManager)"/>,
/// kept for the serializer options it was made for, so a JSON answer allocates no writer (System.Text.Json caches its own
/// the same way, internally).
/// </summary>
/// <remarks>Taken out of the slot while in use, so a serialization that makes another result on the same thread (a converter
/// calling back) gets a writer of its own. A cached writer points at <see cref="Detached"/>, not at the last output, so it
/// keeps no pooled writer reachable. Thread safety: thread-static, nothing shared.</remarks>
internal static class JsonWriterCache
{
    [ThreadStatic]
    private static Utf8JsonWriter? t_writer;

    [ThreadStatic]
    private static JsonSerializerOptions? t_options;

    public static Utf8JsonWriter Rent(IBufferWriter<byte> output, JsonSerializerOptions options)
    {
        var writer = t_writer;
        if (writer is not null && ReferenceEquals(t_options, options))
        {
            t_writer = null;
            writer.Reset(output);
            return writer;
        }
        return new Utf8JsonWriter(output, WriterOptions(options));
    }

    public static void Return(Utf8JsonWriter writer, JsonSerializerOptions options)
    {
        writer.Reset(Detached.Instance);
        t_writer = writer;
        t_options = options;
    }

    /// <summary>The writer options the serializer itself derives from its options (indentation, encoder, depth).</summary>
    private static JsonWriterOptions WriterOptions(JsonSerializerOptions options) => new()
    {
        Encoder = options.Encoder,
        Indented = options.WriteIndented,
        IndentCharacter = options.IndentCharacter,
        IndentSize = options.IndentSize,
        NewLine = options.NewLine,
        MaxDepth = options.MaxDepth == 0 ? 64 : options.MaxDepth, // the serializer's default depth
        SkipValidation = true, // the serializer writes valid JSON; it skips the writer's checks itself in release builds
    };

    /// <summary>The output of a cached writer: nothing may be written there.</summary>
    private sealed class Detached : IBufferWriter<byte>
    {
        public static readonly Detached Instance = new();

        public void Advance(int count) => throw new InvalidOperationException("A cached JSON writer was used without an output.");

        public Memory<byte> GetMemory(int sizeHint = 0) => throw new InvalidOperationException("A cached JSON writer was used without an output.");

        public Span<byte> GetSpan(int sizeHint = 0) => throw new InvalidOperationException("A cached JSON writer was used without an output.");
    }
}
