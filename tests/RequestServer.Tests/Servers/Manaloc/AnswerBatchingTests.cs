using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Lab.RequestServer.Servers;

namespace RequestServer.Tests.Servers.Manaloc;

/// <summary>When the Manaloc build's workers send what they have answered: batched for cheap requests, at once for slow ones.</summary>
public sealed class AnswerBatchingTests
{
    [Fact]
    public async Task A_slow_requests_answer_does_not_wait_for_the_requests_queued_behind_it()
    {
        const int Requests = 8;
        // Half the share is the batch a turn may gather: every request here fits in one batch.
        await using var server = await TestServers.StartAsync("manaloc", new ServerOptions { Workers = 1, ConnectionShare = 2 * Requests });
        using var client = new TestClient(server.EndPoint);
        var frames = new byte[Requests * Frame.RequestSize(4)];
        for (int i = 0; i < Requests; i++)
        {
            Frame.WriteRequest(frames.AsSpan(i * Frame.RequestSize(4)), new RequestHeader(i, 0, Op.Compute), BitConverter.GetBytes(RequestHandler.MaxComputeIterations));
        }
        client.SendRaw(frames); // one write: the reader queues all of them before the first has run

        var first = client.ReadAnswer();
        long sentWhenFirstArrived = server.Counters.Ok;
        var rest = Enumerable.Range(1, Requests - 1).Select(_ => client.ReadAnswer()).ToArray();

        // Each request runs for milliseconds: its answer goes out once it is done, not with the whole batch.
        Assert.Equal(0, first.Id);
        Assert.True(sentWhenFirstArrived < Requests, $"{sentWhenFirstArrived} answers were sent when the first arrived");
        Assert.Equal(Enumerable.Range(1, Requests - 1).Select(i => (long)i), rest.Select(a => a.Id));
        Assert.All(rest.Append(first), a => Assert.Equal(Status.Ok, a.Status));
    }
}
