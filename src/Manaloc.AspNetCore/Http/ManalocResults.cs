using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Manaloc.Buffers;
using Microsoft.AspNetCore.Http;

namespace Manaloc.AspNetCore.Http;

/// <summary>
/// Results that answer a request from pooled buffers and give them back only after the response's body is written:
/// <c>return ManalocResults.Json(order, AppJson.Default.Order);</c>, or for a writer the handler filled itself,
/// <c>return ManalocResults.Bytes(writer, "application/octet-stream");</c> (without <c>using</c>: the result disposes it).
/// </summary>
/// <remarks>
/// <para>Why: a <see cref="PooledBufferWriter"/>'s segments belong to the pool again once it is disposed, and a handler's
/// <c>using</c> disposes it before ASP.NET Core writes the result; a result built from <see cref="PooledBufferWriter.WrittenSequence"/>
/// or a segment of it then sends whatever the next renter wrote there. <see cref="PooledBufferResult"/> owns the writer until
/// the body is flushed into the response.</para>
/// <para>Thread safety: every member is safe from any thread.</para>
/// </remarks>
public static class ManalocResults
{
    // RS0026 (two overloads with optional parameters): the Json overloads differ in their second parameter's type
    // (JsonTypeInfo<TValue> or JsonSerializerOptions), so no call can bind to both, now or after a parameter is added to
    // one; ASP.NET Core's Results.Json has the same shape, which users know.
#pragma warning disable RS0026
    /// <summary>The content type of <see cref="Json{TValue}(TValue, JsonTypeInfo{TValue}, string, int, BufferManager)"/> unless given: <c>application/json; charset=utf-8</c>.</summary>
    internal const string JsonContentType = "application/json; charset=utf-8";

    /// <summary>The content type of <see cref="Bytes"/> unless given: <c>application/octet-stream</c>.</summary>
    internal const string BytesContentType = "application/octet-stream";

    /// <summary>
    /// Serializes <paramref name="value"/> now, with <paramref name="jsonTypeInfo"/> (source-generated metadata: trimming and
    /// NativeAOT safe), into a <see cref="PooledBufferWriter"/> over <paramref name="manager"/>, and returns a result that writes
    /// it with its length and disposes the writer after the body is flushed.
    /// </summary>
    /// <remarks>The value is serialized before this method returns, so a pooled object may go back to its pool right after (the
    /// result holds bytes, not the value); a serialization error is thrown here, before any response is started, and the writer
    /// is disposed.</remarks>
    /// <param name="value">The value to serialize.</param>
    /// <param name="jsonTypeInfo">The value's JSON metadata (its options are the serializer's).</param>
    /// <param name="contentType">The response's content type; <c>application/json; charset=utf-8</c> when null.</param>
    /// <param name="statusCode">The response's status code, from 100 to 599; 200 by default.</param>
    /// <param name="manager">The buffer manager to rent from; <see cref="BufferManager.Shared"/> when null.</param>
    /// <exception cref="ArgumentNullException"><paramref name="jsonTypeInfo"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="statusCode"/> is not between 100 and 599.</exception>
    public static PooledBufferResult Json<TValue>(TValue value, JsonTypeInfo<TValue> jsonTypeInfo, string? contentType = null,
        int statusCode = StatusCodes.Status200OK, BufferManager? manager = null)
    {
        ArgumentNullException.ThrowIfNull(jsonTypeInfo);
        CheckStatusCode(statusCode);
        var writer = new PooledBufferWriter(manager);
        try
        {
            var json = JsonWriterCache.Rent(writer, jsonTypeInfo.Options);
            try
            {
                JsonSerializer.Serialize(json, value, jsonTypeInfo);
            }
            finally
            {
                JsonWriterCache.Return(json, jsonTypeInfo.Options);
            }
        }
        catch
        {
            writer.Dispose();
            throw;
        }
        return new PooledBufferResult(writer, contentType ?? JsonContentType, statusCode);
    }

    /// <summary>
    /// Serializes <paramref name="value"/> now, with <paramref name="options"/> (reflection-based unless the options carry
    /// source-generated metadata), into a <see cref="PooledBufferWriter"/> over <paramref name="manager"/>, and returns a result
    /// that writes it with its length and disposes the writer after the body is flushed.
    /// </summary>
    /// <remarks>The options are the ones given, not the application's <c>ConfigureHttpJsonOptions</c> (the value is serialized
    /// here, with no request at hand): pass <see cref="JsonSerializerOptions.Web"/> for ASP.NET Core's defaults. The value is
    /// serialized before this method returns, as in the other overload.</remarks>
    /// <param name="value">The value to serialize.</param>
    /// <param name="options">The serializer's options.</param>
    /// <param name="contentType">The response's content type; <c>application/json; charset=utf-8</c> when null.</param>
    /// <param name="statusCode">The response's status code, from 100 to 599; 200 by default.</param>
    /// <param name="manager">The buffer manager to rent from; <see cref="BufferManager.Shared"/> when null.</param>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="statusCode"/> is not between 100 and 599.</exception>
    [RequiresUnreferencedCode("JSON serialization by reflection may need types the trimmer removes; use the JsonTypeInfo<TValue> overload.")]
    [RequiresDynamicCode("JSON serialization by reflection may need code generated at run time; use the JsonTypeInfo<TValue> overload.")]
    public static PooledBufferResult Json<TValue>(TValue value, JsonSerializerOptions options, string? contentType = null,
        int statusCode = StatusCodes.Status200OK, BufferManager? manager = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (!options.IsReadOnly) options.MakeReadOnly(populateMissingResolver: true); // as JsonSerializer.Serialize(value, options) does: reflection when no resolver is set
        return Json(value, (JsonTypeInfo<TValue>)options.GetTypeInfo(typeof(TValue)), contentType, statusCode, manager);
    }

#pragma warning restore RS0026

    /// <summary>
    /// A result that sends what <paramref name="writer"/> holds and then disposes it: the writer is the result's from here on.
    /// Do not dispose it (no <c>using</c>), write to it or read from it after this call.
    /// </summary>
    /// <param name="writer">The filled writer; the result takes ownership.</param>
    /// <param name="contentType">The response's content type; <c>application/octet-stream</c> when null.</param>
    /// <param name="statusCode">The response's status code, from 100 to 599; 200 by default.</param>
    /// <exception cref="ArgumentNullException"><paramref name="writer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="statusCode"/> is not between 100 and 599.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="writer"/> was disposed already.</exception>
    public static PooledBufferResult Bytes(PooledBufferWriter writer, string? contentType = null, int statusCode = StatusCodes.Status200OK)
    {
        ArgumentNullException.ThrowIfNull(writer);
        CheckStatusCode(statusCode);
        _ = writer.WrittenCount; // a writer disposed already fails here, in the handler, not later in the response
        return new PooledBufferResult(writer, contentType ?? BytesContentType, statusCode);
    }

    private static void CheckStatusCode(int statusCode)
    {
        if (statusCode is < 100 or > 599)
            throw new ArgumentOutOfRangeException(nameof(statusCode), statusCode, "An HTTP status code is between 100 and 599.");
    }
}
