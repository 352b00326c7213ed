using System.Buffers.Binary;
using System.Text;
using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Lab.RequestServer.Servers;

namespace RequestServer.Tests.Servers;

/// <summary>Bad input gets an error answer or a close, never a crash or a stuck connection, and the server goes on serving.</summary>
public sealed class MalformedInputTests
{
    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task An_unknown_op_or_bad_payload_gets_an_error_and_the_connection_goes_on(string build)
    {
        await using var server = await TestServers.StartAsync(build);
        using var client = new TestClient(server.EndPoint);
        client.Send(1, (Op)99, [1, 2]);
        client.Send(2, Op.Compute, [1]);
        client.SendInt(3, Op.Records, -5);
        client.Send(4, Op.Echo, [7]);

        var answers = Enumerable.Range(0, 4).Select(_ => client.ReadAnswer()).OrderBy(a => a.Id).ToArray();
        Assert.Equal([Status.Error, Status.Error, Status.Error, Status.Ok], answers.Select(a => a.Status));
        Assert.Equal("unknown op", Encoding.UTF8.GetString(answers[0].Payload));
        Assert.Equal(new byte[] { 7 }, answers[3].Payload);
        TestServers.WaitUntil(() => server.Counters.Error == 3, "three errors are counted");
    }

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task A_bad_length_gets_one_error_answer_and_a_close(string build)
    {
        await using var server = await TestServers.StartAsync(build);
        foreach (int length in new[] { 3, Frame.RequestHeaderSize + Frame.MaxPayload + 1, -20 })
        {
            using var client = new TestClient(server.EndPoint);
            client.Send(1, Op.Echo, [1]);
            var prefix = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(prefix, length);
            client.SendRaw(prefix);
            client.SendRaw(new byte[100]);

            // The echo before the bad prefix is answered (queued builds may answer it after the error), then the close.
            var answers = new[] { client.ReadAnswer(), client.ReadAnswer() }.OrderBy(a => a.Id).ToArray();
            Assert.Equal((0L, Status.Error, "bad frame length"), (answers[0].Id, answers[0].Status, Encoding.UTF8.GetString(answers[0].Payload)));
            Assert.Equal((1L, Status.Ok), (answers[1].Id, answers[1].Status));
            Assert.Null(client.Read());
        }
        TestServers.WaitUntil(() => server.Counters.MalformedStreams == 3, "three malformed streams are counted");
        AssertStillServes(server);
    }

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task A_truncated_frame_is_counted_and_the_server_goes_on(string build)
    {
        await using var server = await TestServers.StartAsync(build);
        using (var client = new TestClient(server.EndPoint))
        {
            var frame = new byte[Frame.RequestSize(10)];
            Frame.WriteRequest(frame, new RequestHeader(1, 0, Op.Echo), new byte[10]);
            client.SendRaw(frame.AsSpan(0, frame.Length - 3));
            client.FinishSending();
            Assert.Null(client.Read());
        }
        TestServers.WaitUntil(() => server.Counters.Truncated == 1, "the truncated connection is counted");
        Assert.Equal(0, server.Counters.Received);
        AssertStillServes(server);
    }

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task Random_garbage_never_crashes_the_server(string build)
    {
        await using var server = await TestServers.StartAsync(build);
        var random = new Random(16);
        for (int round = 0; round < 20; round++)
        {
            using var client = new TestClient(server.EndPoint);
            var garbage = new byte[random.Next(1, 4000)];
            random.NextBytes(garbage);
            client.SendRaw(garbage);
            client.FinishSending();
            while (client.Read() is { } answer)
            {
                Assert.True(answer.Status is Status.Ok or Status.Error or Status.Busy or Status.Expired);
            }
        }
        AssertStillServes(server);
        var report = await server.ShutdownAsync(TimeSpan.FromSeconds(5)).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(0, report.Lost);
    }

    private static void AssertStillServes(IRequestServer server)
    {
        using var client = new TestClient(server.EndPoint);
        client.Send(5, Op.Echo, [5, 5]);
        var answer = client.ReadAnswer();
        Assert.Equal((5L, Status.Ok), (answer.Id, answer.Status));
    }
}
