using Manaloc.Lab.RequestServer.Load;
using Manaloc.Lab.RequestServer.Servers;

namespace RequestServer.Tests.Load;

/// <summary>Under a short load with a flooder, every request is accounted for on both sides and the two sides agree.</summary>
public sealed class AccountingTests
{
    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task Sent_equals_ok_busy_expired_error_and_lost_and_nothing_is_lost(string build)
    {
        await using var server = await TestServers.StartAsync(build);
        var before = await LoadGenerator.QueryStatsAsync(server.EndPoint).WaitAsync(TimeSpan.FromSeconds(10));
        var result = await Task.Run(() => LoadGenerator.Run(new LoadOptions
        {
            Target = server.EndPoint,
            PoliteClients = 3,
            PoliteRate = 200,
            PipelinedClients = 1,
            PipelineWindow = 512,
            MaxPipelinedRequests = 20_000,
            ComputeIterations = 2_000,
            Duration = TimeSpan.FromMilliseconds(400),
        })).WaitAsync(TimeSpan.FromSeconds(60));
        TestServers.WaitUntil(() => server.Counters.InFlight == 0, "the server has answered everything");
        var after = await LoadGenerator.QueryStatsAsync(server.EndPoint).WaitAsync(TimeSpan.FromSeconds(10));
        var phase = new PhaseFigures("test", result, before, after);

        Assert.True(result.Polite.Balances && result.Pipelined.Balances, $"{result.Polite} / {result.Pipelined}");
        Assert.True(result.Polite.Sent > 0 && result.Pipelined.Sent > 0);
        Assert.Equal(0, result.Total.Lost);
        Assert.Equal(0, result.Violations);
        Assert.Equal(0, phase.Mismatch);
        Assert.Equal(0, phase.Lost);
        Assert.Equal(result.Polite.Sent, result.PoliteLatency.Count);
    }

    [Fact]
    public async Task Manaloc_pauses_a_flooder_at_its_share_instead_of_answering_busy()
    {
        await using var server = await TestServers.StartAsync("manaloc", new ServerOptions { ConnectionShare = 4 });
        var result = await Task.Run(() => LoadGenerator.Run(new LoadOptions
        {
            Target = server.EndPoint,
            PoliteClients = 2,
            PoliteRate = 100,
            PipelinedClients = 1,
            PipelineWindow = 2000,
            MaxPipelinedRequests = 20_000,
            ComputeIterations = 1_000,
            Duration = TimeSpan.FromMilliseconds(400),
        })).WaitAsync(TimeSpan.FromSeconds(60));

        // Nobody gets busy: the flooder's excess waits in its own socket. A lost wake-up between the paused
        // reader and the writer, or a lost turn, would leave the flooder's requests unanswered (lost) here.
        Assert.Equal(0, result.Total.Lost);
        Assert.Equal(0, result.Total.Busy);
        Assert.True(result.Pipelined.Ok > 4);
    }

    [Fact]
    public async Task Manaloc_answers_busy_over_the_share_when_asked_to()
    {
        await using var server = await TestServers.StartAsync("manaloc", new ServerOptions { ConnectionShare = 2, BusyOverShare = true, Workers = 1 });
        var result = await Task.Run(() => LoadGenerator.Run(new LoadOptions
        {
            Target = server.EndPoint,
            PoliteClients = 0,
            PipelinedClients = 1,
            PipelineWindow = 256,
            MaxPipelinedRequests = 5_000,
            ComputeIterations = 20_000,
            Duration = TimeSpan.FromMilliseconds(300),
        })).WaitAsync(TimeSpan.FromSeconds(60));

        Assert.Equal(0, result.Total.Lost);
        Assert.True(result.Pipelined.Busy > 0, result.Pipelined.ToString());
    }

    [Fact]
    public void The_load_generator_refuses_a_non_loopback_target()
    {
        var options = new LoadOptions { Target = new System.Net.IPEndPoint(System.Net.IPAddress.Parse("10.1.2.3"), 80) };
        Assert.Throws<ArgumentException>(() => LoadGenerator.Run(options));
    }
}

/// <summary>A server that goes away mid-load: the generator stops by itself and counts what was not answered as lost.</summary>
public sealed class VanishingServerTests
{
    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task Requests_the_server_never_answered_are_counted_lost_and_the_identity_holds(string build)
    {
        var server = await TestServers.StartAsync(build);
        var load = Task.Run(() => LoadGenerator.Run(new LoadOptions
        {
            Target = server.EndPoint,
            PoliteClients = 2,
            PoliteRate = 500,
            PipelinedClients = 1,
            PipelineWindow = 256,
            MaxPipelinedRequests = 1_000_000,
            Duration = TimeSpan.FromSeconds(2),
            DrainTimeout = TimeSpan.FromMilliseconds(500),
        }));
        TestServers.WaitUntil(() => server.Counters.Ok > 50, "the load is under way");
        var report = await server.ShutdownAsync(TimeSpan.FromMilliseconds(50)).WaitAsync(TimeSpan.FromSeconds(30));
        await server.DisposeAsync();
        var result = await load.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(0, report.Lost);
        Assert.True(result.Polite.Balances && result.Pipelined.Balances, $"{result.Polite} / {result.Pipelined}");
        Assert.Equal(0, result.Violations);
        // The client got exactly the answers the server says it sent (unanswered ones are the client's lost too).
        Assert.Equal(report.Final.Ok + report.Final.Busy + report.Final.Expired + report.Final.Error, result.Total.Answered);
        Assert.True(result.Total.Lost > 0, result.Total.ToString());
    }
}
