using Manaloc.Lab.RequestServer.Protocol;

namespace RequestServer.Tests.Servers;

/// <summary>A shutdown with requests in flight answers every request it read, within its deadline, and reports what it did not run.</summary>
public sealed class ShutdownTests
{
    private const int Requests = 40;
    // Tens of milliseconds each: slow enough that, with one worker, most of the 40 are still queued when the shutdown
    // starts after the first answer, however fast or idle the machine (at 3M iterations an idle machine ran all 40 first).
    private const int SlowIterations = RequestHandler.MaxComputeIterations;

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task Every_request_read_before_the_shutdown_is_answered_and_the_report_balances(string build)
    {
        var server = await TestServers.StartAsync(build, new() { Workers = 1, ConnectionShare = Requests });
        using var client = new TestClient(server.EndPoint);
        for (int i = 0; i < Requests; i++) client.SendInt(i, Op.Compute, SlowIterations);
        // The queued builds read frames as they arrive and queue them all: wait until every request is read (not only
        // the first), so the shutdown starts with all 40 accepted and none can be refused at read. Kestrel runs each
        // request of a read before it reads again (kestrel-manaloc on its dispatcher), so there the shutdown starts once the first one is done.
        bool queued = build is not ("kestrel" or "kestrel-manaloc");
        TestServers.WaitUntil(() => server.Counters.Ok >= 1 && (!queued || server.Counters.Received >= Requests), queued ? "every request is read and the first is done" : "the first request is done");

        var shutdown = server.ShutdownAsync(TimeSpan.FromMilliseconds(20));
        var answers = new List<(long Id, Status Status)>();
        while (client.Read() is { } answer) answers.Add((answer.Id, answer.Status));
        var report = await shutdown.WaitAsync(TimeSpan.FromSeconds(30));
        await server.DisposeAsync();

        // Nothing silent: every request read is answered or reported unanswered, and the report's answers are
        // exactly the ones the client got, once each.
        Assert.Equal(0, report.Lost);
        Assert.Equal(report.Final.Received, report.Final.Ok + report.Final.Busy + report.Final.Expired + report.Final.Error + report.Unanswered);
        Assert.Equal(answers.Count, answers.Select(a => a.Id).Distinct().Count());
        Assert.Equal(report.Final.Ok, answers.Count(a => a.Status == Status.Ok));
        Assert.Equal(report.Final.Busy, answers.Count(a => a.Status == Status.Busy));
        Assert.True(report.Elapsed < TimeSpan.FromSeconds(10), $"the shutdown took {report.Elapsed}");
        if (queued)
        {
            // Every request was read before the shutdown, so each is answered exactly once: ok if the worker ran it before
            // the drain deadline, otherwise busy and counted not run. How many ran depends on the machine's speed, so the
            // test checks that the counts add up, not how many fell on each side. The one exception: the reader counts a
            // request received just before it checks for a shutdown, so the last request read may be answered busy at
            // read (not counted not run) if the shutdown began in between.
            Assert.Equal(0, report.Unanswered);
            Assert.Equal(Enumerable.Range(0, Requests).Select(i => (long)i), answers.Select(a => a.Id).Order());
            Assert.Equal(Requests, report.Final.Received);
            Assert.Equal(Requests, report.Final.Ok + report.Final.Busy);
            Assert.InRange(report.NotRun, Math.Max(0, report.Final.Busy - 1), report.Final.Busy);
        }
        // Kestrel reads (and so receives) frames as they come, not all 40 at once; what it did not read before the
        // close is not counted received. An abort past its grace would count flushed answers the client never
        // got, which the equalities above would catch.
    }

    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task After_the_shutdown_no_connection_is_accepted(string build)
    {
        var server = await TestServers.StartAsync(build);
        var endPoint = server.EndPoint;
        var report = await server.ShutdownAsync(TimeSpan.FromSeconds(1)).WaitAsync(TimeSpan.FromSeconds(30));
        await server.DisposeAsync();
        Assert.Equal(0, report.Lost);
        Assert.ThrowsAny<System.Net.Sockets.SocketException>(() =>
        {
            using var client = new TestClient(endPoint);
            client.Send(1, Op.Echo, [1]);
            if (client.Read() is null) throw new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.ConnectionReset);
        });
    }

    [Fact]
    public async Task A_second_shutdown_returns_the_first_report()
    {
        var server = await TestServers.StartAsync("manaloc");
        var first = server.ShutdownAsync(TimeSpan.FromSeconds(1));
        Assert.Same(first, server.ShutdownAsync(TimeSpan.FromSeconds(5)));
        await first.WaitAsync(TimeSpan.FromSeconds(30));
        await server.DisposeAsync();
    }
}
