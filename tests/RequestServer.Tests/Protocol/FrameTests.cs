using System.Buffers.Binary;
using Manaloc.Lab.RequestServer.Protocol;

namespace RequestServer.Tests.Protocol;

public sealed class FrameTests
{
    [Fact]
    public void A_request_reads_back_as_written()
    {
        var buffer = new byte[64];
        byte[] payload = [1, 2, 3, 4, 5];
        int size = Frame.WriteRequest(buffer, new RequestHeader(42, 1500, Op.Echo), payload);

        Assert.Equal(Frame.RequestSize(5), size);
        Assert.Equal(ParseResult.Complete, Frame.TryReadRequest(buffer.AsSpan(0, size), out var header, out var range, out int frameSize));
        Assert.Equal(new RequestHeader(42, 1500, Op.Echo), header);
        Assert.Equal(size, frameSize);
        Assert.Equal(payload, buffer.AsSpan(0, size)[range].ToArray());
    }

    [Fact]
    public void A_response_reads_back_as_written()
    {
        var buffer = new byte[64];
        int size = Frame.WriteResponse(buffer, -7, Status.Expired, [9, 8]);

        Assert.True(Frame.TryReadResponse(buffer.AsSpan(0, size), out long id, out var status, out var range, out int frameSize));
        Assert.Equal((-7L, Status.Expired, size), (id, status, frameSize));
        Assert.Equal(new byte[] { 9, 8 }, buffer.AsSpan(0, size)[range].ToArray());
    }

    [Fact]
    public void Every_prefix_of_a_frame_is_incomplete()
    {
        var buffer = new byte[32];
        int size = Frame.WriteRequest(buffer, new RequestHeader(1, 0, Op.Compute), [0, 0, 0, 0]);
        for (int n = 0; n < size; n++)
        {
            Assert.Equal(ParseResult.Incomplete, Frame.TryReadRequest(buffer.AsSpan(0, n), out _, out _, out _));
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(Frame.RequestHeaderSize - 1)]
    [InlineData(Frame.RequestHeaderSize + Frame.MaxPayload + 1)]
    [InlineData(-1)]
    [InlineData(int.MaxValue)]
    public void An_impossible_length_is_a_bad_length(int length)
    {
        var buffer = new byte[8];
        BinaryPrimitives.WriteInt32LittleEndian(buffer, length);
        Assert.Equal(ParseResult.BadLength, Frame.TryReadRequest(buffer, out _, out _, out _));
    }

    [Fact]
    public void Writing_an_oversize_payload_or_into_a_short_buffer_throws()
    {
        Assert.Throws<ArgumentException>(() => Frame.WriteRequest(new byte[Frame.MaxRequestFrame + 10], new RequestHeader(1, 0, Op.Echo), new byte[Frame.MaxPayload + 1]));
        Assert.Throws<ArgumentException>(() => Frame.WriteResponse(new byte[10], 1, Status.Ok, new byte[4]));
    }

    [Fact]
    public void A_response_with_an_impossible_length_is_invalid_data()
    {
        var buffer = new byte[8];
        BinaryPrimitives.WriteInt32LittleEndian(buffer, 3);
        Assert.Throws<InvalidDataException>(() => Frame.TryReadResponse(buffer, out _, out _, out _, out _));
    }
}

public sealed class RequestHandlerTests
{
    [Theory]
    [InlineData(Op.Compute, new byte[] { 1, 0, 0 }, "compute needs a 4-byte iteration count")]
    [InlineData(Op.Compute, new byte[] { 0xFF, 0xFF, 0xFF, 0xFF }, "compute iterations out of range")]
    [InlineData(Op.Records, new byte[] { 0, 0, 0, 0 }, "record count out of range")]
    [InlineData(Op.Stats, new byte[] { 1 }, "stats takes no payload")]
    [InlineData((Op)77, new byte[0], "unknown op")]
    public void Invalid_requests_are_named(Op op, byte[] payload, string reason)
        => Assert.Equal(reason, RequestHandler.Validate(new RequestHeader(1, 0, op), payload));

    [Fact]
    public void A_negative_deadline_is_invalid()
        => Assert.Equal("negative deadline", RequestHandler.Validate(new RequestHeader(1, -1, Op.Echo), []));

    [Theory]
    [InlineData(1)]
    [InlineData(64)]
    [InlineData(1000)]
    public void Managed_records_sum_to_the_expected_checksum(int count)
        => Assert.Equal(RequestHandler.ExpectedRecordChecksum(count), ManagedRecordBatch.Instance.FillAndSum(count));
}
