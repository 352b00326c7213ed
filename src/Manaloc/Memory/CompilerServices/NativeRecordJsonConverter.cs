using System.ComponentModel;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Manaloc.Memory.CompilerServices;

/// <summary>
/// Writes a record's data with System.Text.Json: the converter of every class a <see cref="TypeAllocator"/> hands out (the
/// compiled and the emitted ones carry it as their <see cref="JsonConverterAttribute"/>; <see cref="NativeRecordJson.TypeInfoResolver"/>
/// gives it under source generation).
/// </summary>
/// <remarks>
/// <para>Why: a record's run-time class is generated and implements the interface's properties explicitly, so a serializer
/// that reflects on the record's generated class (<c>JsonSerializer.Serialize((object)record)</c>, an endpoint whose declared type is
/// the interface or <c>object</c>) would find no property and write <c>{}</c>. This converter writes the record as its
/// interface instead: the contract <c>options.GetTypeInfo(interface)</c> gives (reflection, or the application's
/// <c>JsonSerializerContext</c>, which must then list the interface), exactly what <c>Serialize&lt;IProduct&gt;</c> writes.</para>
/// <para>Before writing, the record's stamp is compared, in checked and unchecked allocators alike: a record deleted, or an
/// item or view of a disposed array, throws (<see cref="InvalidOperationException"/> after Delete,
/// <see cref="ObjectDisposedException"/> after a Dispose, naming what was disposed) instead of writing dead memory or <c>{}</c>.
/// Reading is refused with <see cref="NotSupportedException"/>: a record lives in an allocator's memory, so deserialize into
/// a plain type and copy its values into a record from <see cref="TypeAllocator.New{T}"/>. Thread-safe, stateless.</para>
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public sealed class NativeRecordJsonConverter : JsonConverter<NativeRecord>
{
    /// <summary>The one instance (the converter keeps no state).</summary>
    public static NativeRecordJsonConverter Instance { get; } = new();

    /// <summary>True for <see cref="NativeRecord"/> and every class derived from it (the generated record classes).</summary>
    /// <param name="typeToConvert">The type System.Text.Json asks about.</param>
    public override bool CanConvert(Type typeToConvert) => typeof(NativeRecord).IsAssignableFrom(typeToConvert);

    /// <summary>Refused: records are made by an allocator, not by a serializer.</summary>
    /// <exception cref="NotSupportedException">Always.</exception>
    public override NativeRecord Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
        => throw new NotSupportedException($"A Manaloc record ({typeToConvert.Name}) cannot be deserialized: its memory belongs to a TypeAllocator. "
            + "Deserialize into a plain type and copy its values into a record from TypeAllocator.New or NewArray.");

    /// <summary>Writes the record's properties as its interface declares them, after checking that it is still allocated.</summary>
    /// <exception cref="InvalidOperationException">The record was deleted.</exception>
    /// <exception cref="ObjectDisposedException">The record's array or allocator was disposed.</exception>
    /// <exception cref="NotSupportedException">The options' resolver has no contract for the record interface (a
    /// <c>JsonSerializerContext</c> that does not list it).</exception>
    public override void Write(Utf8JsonWriter writer, NativeRecord value, JsonSerializerOptions options)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(value);
        ArgumentNullException.ThrowIfNull(options);
        value.ThrowIfNotAllocated();
        // The interface's contract, not the run-time type's: no recursion into this converter, and under source generation
        // the context's metadata for the interface (its getters called through the interface, so a checked accessor still
        // checks each read).
        JsonSerializer.Serialize(writer, value, options.GetTypeInfo(value.RecordInterface));
    }
}
