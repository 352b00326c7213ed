using System.Buffers;
using System.Text.Json;
using System.Text.Json.Serialization;
using Manaloc.AspNetCore.Http;
using Manaloc.Buffers;
using Microsoft.AspNetCore.Http;

namespace Manaloc.AspNetCore.Tests.Http;

/// <summary><see cref="ManalocResults"/> and <see cref="PooledBufferResult"/> on a <see cref="DefaultHttpContext"/>: headers, body, ownership, errors.</summary>
public sealed class ManalocResultsTests
{
    private static (DefaultHttpContext Context, MemoryStream Body) NewContext()
    {
        var body = new MemoryStream();
        var context = new DefaultHttpContext();
        context.Response.Body = body;
        return (context, body);
    }

    private static BufferManager StrictManager() => new(new BufferManagerOptions { Name = "results", DebugMode = true, PoisonReturnedBuffers = true });

    [Fact]
    public async Task Bytes_writes_status_type_length_and_every_segment_then_disposes_the_writer()
    {
        using var manager = StrictManager();
        var payload = new byte[20_000]; // 4 KiB + 8 KiB + 16 KiB segments
        new Random(3).NextBytes(payload);
        var writer = new PooledBufferWriter(manager);
        for (int i = 0; i < payload.Length; i += 1000) writer.Write(payload.AsSpan(i, 1000));
        var result = ManalocResults.Bytes(writer, "text/plain", StatusCodes.Status201Created);
        Assert.Equal(201, result.StatusCode);
        Assert.Equal("text/plain", result.ContentType);
        var (context, body) = NewContext();

        await result.ExecuteAsync(context);

        Assert.Equal(201, context.Response.StatusCode);
        Assert.Equal("text/plain", context.Response.ContentType);
        Assert.Equal(payload.Length, context.Response.ContentLength);
        Assert.Equal(payload, body.ToArray());
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenCount);
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }

    [Fact]
    public async Task An_empty_writer_answers_with_a_length_of_zero_and_is_disposed()
    {
        var writer = new PooledBufferWriter();
        var (context, body) = NewContext();
        await ManalocResults.Bytes(writer).ExecuteAsync(context);
        Assert.Equal(0, context.Response.ContentLength);
        Assert.Equal("application/octet-stream", context.Response.ContentType);
        Assert.Equal(0, body.Length);
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenCount);
    }

    [Fact]
    public async Task A_second_execution_throws_and_writes_nothing()
    {
        var writer = new PooledBufferWriter();
        writer.Write("once"u8);
        var result = ManalocResults.Bytes(writer);
        var (first, _) = NewContext();
        await result.ExecuteAsync(first);
        var (second, body) = NewContext();
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => result.ExecuteAsync(second));
        Assert.Contains("executed already", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, body.Length);
    }

    [Fact]
    public async Task A_writer_the_handler_disposed_fails_the_response_with_a_message_that_says_why()
    {
        var writer = new PooledBufferWriter();
        writer.Write("late"u8);
        var result = ManalocResults.Bytes(writer);
        writer.Dispose(); // what a 'using' in the handler does
        var (context, body) = NewContext();
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => result.ExecuteAsync(context));
        Assert.Contains("do not dispose it in the handler", error.Message, StringComparison.Ordinal);
        Assert.IsType<ObjectDisposedException>(error.InnerException);
        Assert.Equal(0, body.Length);
    }

    [Fact]
    public async Task A_body_write_that_fails_still_disposes_the_writer()
    {
        using var manager = StrictManager();
        var writer = new PooledBufferWriter(manager);
        writer.Write(new byte[10_000]);
        var context = new DefaultHttpContext();
        context.Response.Body = new FailingStream();
        await Assert.ThrowsAsync<IOException>(() => ManalocResults.Bytes(writer).ExecuteAsync(context));
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenCount);
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }

    [Fact]
    public void Bad_arguments_are_refused_at_once()
    {
        Assert.Throws<ArgumentNullException>(() => ManalocResults.Bytes(null!));
        var disposed = new PooledBufferWriter();
        disposed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => ManalocResults.Bytes(disposed));
        using var writer = new PooledBufferWriter();
        Assert.Equal("statusCode", Assert.Throws<ArgumentOutOfRangeException>(() => ManalocResults.Bytes(writer, statusCode: 99)).ParamName);
        Assert.Throws<ArgumentOutOfRangeException>(() => ManalocResults.Json(1, ResultsUnitJson.Default.Int32, statusCode: 600));
        Assert.Throws<ArgumentNullException>(() => ManalocResults.Json(1, (System.Text.Json.Serialization.Metadata.JsonTypeInfo<int>)null!));
        Assert.Throws<ArgumentNullException>(() => ManalocResults.Json(1, (JsonSerializerOptions)null!));
    }

    [Fact]
    public async Task Json_serializes_when_the_result_is_made_so_the_value_may_go_back_to_a_pool()
    {
        var form = new Form { Name = "first" };
        var result = ManalocResults.Json(form, ResultsUnitJson.Default.Form);
        form.Name = "reused by another request";
        var (context, body) = NewContext();
        await result.ExecuteAsync(context);
        Assert.Equal("""{"name":"first"}""", System.Text.Encoding.UTF8.GetString(body.ToArray()));
        Assert.Equal("application/json; charset=utf-8", context.Response.ContentType);
        Assert.Equal(body.Length, context.Response.ContentLength);
    }

    [Fact]
    public async Task Json_with_options_writes_what_the_serializer_writes_with_them()
    {
        var options = new JsonSerializerOptions(JsonSerializerDefaults.Web) { WriteIndented = true };
        var value = new Form { Name = "<indented & escaped>" };
        for (int round = 0; round < 2; round++) // the second round reuses the thread's cached JSON writer
        {
            var (context, body) = NewContext();
            await ManalocResults.Json(value, options, "application/problem+json", StatusCodes.Status400BadRequest).ExecuteAsync(context);
            Assert.Equal(JsonSerializer.SerializeToUtf8Bytes(value, options), body.ToArray());
            Assert.Equal(400, context.Response.StatusCode);
            Assert.Equal("application/problem+json", context.Response.ContentType);
        }
        var (compact, compactBody) = NewContext(); // other options on the same thread: a writer made for them
        await ManalocResults.Json(value, JsonSerializerOptions.Web).ExecuteAsync(compact);
        Assert.Equal(JsonSerializer.SerializeToUtf8Bytes(value, JsonSerializerOptions.Web), compactBody.ToArray());
    }

    [Fact]
    public void A_value_that_fails_to_serialize_throws_in_the_handler_and_gives_the_buffers_back()
    {
        using var manager = StrictManager();
        var options = new JsonSerializerOptions { Converters = { new FailingConverter() } };
        var error = Assert.Throws<InvalidOperationException>(() => ManalocResults.Json(new Form { Name = "x" }, options, manager: manager));
        Assert.Equal("cannot serialize", error.Message);
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
        // The thread's cached JSON writer is usable after the failure.
        var result = ManalocResults.Json(new Form { Name = "after" }, JsonSerializerOptions.Web);
        Assert.Equal(200, result.StatusCode);
    }

    private sealed class FailingStream : Stream
    {
        public override bool CanRead => false;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override void Flush() { }
        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new IOException("the connection broke");
        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => ValueTask.FromException(new IOException("the connection broke"));
    }

    private sealed class FailingConverter : JsonConverter<Form>
    {
        public override Form Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => throw new NotSupportedException();

        public override void Write(Utf8JsonWriter writer, Form value, JsonSerializerOptions options)
        {
            writer.WriteStartObject();
            throw new InvalidOperationException("cannot serialize");
        }
    }
}

/// <summary>A mutable object, as a pooled one is.</summary>
public sealed class Form
{
    public string Name { get; set; } = "";
}

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(Form))]
[JsonSerializable(typeof(int))]
internal sealed partial class ResultsUnitJson : JsonSerializerContext;
