using Manaloc.Lab.RequestServer;
using Manaloc.Lab.RequestServer.Load;
using Manaloc.Lab.RequestServer.Servers;

namespace RequestServer.Tests.Servers;

/// <summary>The stats answer: what taking a snapshot allocates is the control request's, not the load's.</summary>
public sealed class ServerStatsTests
{
    [Theory]
    [InlineData("manaloc")]
    [InlineData("bcl")]
    public async Task Snapshots_of_an_idle_server_show_no_allocation_between_them(string build)
    {
        // In a child process, so the test's own allocations are not the server's.
        using var server = await ServerProcess.StartAsync(TestServers.SampleLaunch(), ServerFactory.Parse(build), [], TimeSpan.FromSeconds(30));
        var snapshots = new List<ServerStats>();
        using (var stats = await StatsClient.ConnectAsync(server.EndPoint).WaitAsync(TimeSpan.FromSeconds(10)))
        {
            for (int i = 0; i < 7; i++) snapshots.Add(await stats.QueryAsync().WaitAsync(TimeSpan.FromSeconds(10)));
        }
        await server.StopAsync(TimeSpan.FromSeconds(30));

        // Taking and serializing one snapshot allocates over 20 KB (the process's figures, the JSON); counted, each
        // would show up in the next. What is left is the answer's own path (the BCL build's frame and send, about
        // 500 B; the Manaloc build's nothing), plus now and then a one-time cost of the runtime's (a thread's first
        // use of a pool, some kilobytes): hence the median. The first interval may hold the connection's first read.
        var between = snapshots.Skip(1).Zip(snapshots.Skip(2), (a, b) => b.AllocatedBytes - a.AllocatedBytes).Order().ToArray();
        Assert.True(between[0] >= 0, string.Join(", ", between));
        Assert.InRange(between[between.Length / 2], 0, 1024);
    }
}

