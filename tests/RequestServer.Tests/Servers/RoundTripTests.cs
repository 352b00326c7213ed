using System.Buffers.Binary;
using System.Text;
using Manaloc.Lab.RequestServer.Load;
using Manaloc.Lab.RequestServer.Protocol;

namespace RequestServer.Tests.Servers;

/// <summary>Every build answers the protocol the same way.</summary>
public sealed class RoundTripTests
{
    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task Echo_compute_and_records_are_answered_with_the_right_payloads(string build)
    {
        await using var server = await TestServers.StartAsync(build);
        using (var client = new TestClient(server.EndPoint))
        {
            byte[] text = Encoding.UTF8.GetBytes("hello, " + build);
            client.Send(1, Op.Echo, text);
            client.SendInt(2, Op.Compute, 1000);
            client.SendInt(3, Op.Records, 500);
            client.Send(4, Op.Echo, new byte[Frame.MaxPayload]);

            var answers = Enumerable.Range(0, 4).Select(_ => client.ReadAnswer()).OrderBy(a => a.Id).ToArray();
            Assert.All(answers, a => Assert.Equal(Status.Ok, a.Status));
            Assert.Equal(text, answers[0].Payload);
            Assert.Equal(RequestHandler.Compute(1000), BinaryPrimitives.ReadInt64LittleEndian(answers[1].Payload));
            Assert.Equal(RequestHandler.ExpectedRecordChecksum(500), BinaryPrimitives.ReadInt64LittleEndian(answers[2].Payload));
            Assert.Equal(Frame.MaxPayload, answers[3].Payload.Length);
        }
        var report = await server.ShutdownAsync(TimeSpan.FromSeconds(5)).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal((4, 4, 0), (report.Final.Received, report.Final.Ok, report.Lost));
    }

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task Frames_that_arrive_in_pieces_and_span_reads_are_answered_whole(string build)
    {
        // Echo frames of several sizes, pipelined into one byte stream and sent in uneven pieces (a length prefix split
        // across two sends too), so frames start and end inside the server's reads and span its buffer segments.
        int[] sizes = [1, 3_000, Frame.MaxPayload, 17, 9_000, 4_090, Frame.MaxPayload - 1, 5];
        var stream = new List<byte>();
        var frame = new byte[Frame.MaxRequestFrame];
        for (int i = 0; i < sizes.Length; i++)
        {
            var payload = Enumerable.Range(0, sizes[i]).Select(b => (byte)(b * 7 + i)).ToArray();
            int length = Frame.WriteRequest(frame, new RequestHeader(i + 1, 0, Op.Echo), payload);
            stream.AddRange(frame.AsSpan(0, length).ToArray());
        }
        byte[] bytes = [.. stream];
        await using var server = await TestServers.StartAsync(build);
        using (var client = new TestClient(server.EndPoint))
        {
            int[] pieces = [2, 1, 4093, 3, 70_000, 11, 8_192];
            for (int sent = 0, p = 0; sent < bytes.Length; p++)
            {
                int n = Math.Min(pieces[p % pieces.Length], bytes.Length - sent);
                client.SendRaw(bytes.AsSpan(sent, n));
                sent += n;
                if (p % 3 == 0) Thread.Sleep(5); // let the server read what has come so far
            }
            var answers = Enumerable.Range(0, sizes.Length).Select(_ => client.ReadAnswer()).OrderBy(a => a.Id).ToArray();
            for (int i = 0; i < sizes.Length; i++)
            {
                Assert.Equal((i + 1L, Status.Ok), (answers[i].Id, answers[i].Status));
                Assert.Equal(Enumerable.Range(0, sizes[i]).Select(b => (byte)(b * 7 + i)).ToArray(), answers[i].Payload);
            }
        }
        var report = await server.ShutdownAsync(TimeSpan.FromSeconds(5)).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal((sizes.Length, sizes.Length, 0), (report.Final.Received, report.Final.Ok, report.Lost));
    }

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task A_request_past_its_deadline_before_work_starts_is_answered_expired(string build)
    {
        await using var server = await TestServers.StartAsync(build, new() { Workers = 1 });
        using var client = new TestClient(server.EndPoint);
        // One write, so one read: a long request occupies the worker (or the connection, in Kestrel) while
        // the second, read at the same moment with a 1 µs budget, waits past it and is not run.
        var frames = new byte[2 * Frame.RequestSize(4)];
        Frame.WriteRequest(frames, new RequestHeader(1, 0, Op.Compute), BitConverter.GetBytes(3_000_000));
        Frame.WriteRequest(frames.AsSpan(Frame.RequestSize(4)), new RequestHeader(2, 1, Op.Compute), BitConverter.GetBytes(10));
        client.SendRaw(frames);
        var answers = new[] { client.ReadAnswer(), client.ReadAnswer() }.OrderBy(a => a.Id).ToArray();
        Assert.Equal(Status.Ok, answers[0].Status);
        Assert.Equal(Status.Expired, answers[1].Status);
        Assert.Empty(answers[1].Payload);
    }

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task The_stats_request_reports_the_counters(string build)
    {
        await using var server = await TestServers.StartAsync(build);
        using (var client = new TestClient(server.EndPoint))
        {
            client.Send(1, Op.Echo, [1]);
            client.ReadAnswer();
        }
        var stats = await LoadGenerator.QueryStatsAsync(server.EndPoint).WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(build, stats.Build);
        Assert.Equal(1, stats.Received);
        Assert.True(stats.AllocatedBytes > 0 && stats.PeakWorkingSetBytes > 0);
    }
}
