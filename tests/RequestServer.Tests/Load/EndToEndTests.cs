using Manaloc.Lab.RequestServer.Load;
using Manaloc.Lab.RequestServer.Servers;

namespace RequestServer.Tests.Load;

/// <summary>The lab's path, shortened: each build in its own child process, the smoke load plan, a graceful stop.</summary>
public sealed class EndToEndTests
{
    [Theory]
    [MemberData(nameof(TestServers.Builds), MemberType = typeof(TestServers))]
    public async Task A_build_in_a_child_process_serves_the_smoke_plan_and_loses_nothing(string build)
    {
        var figures = await BuildComparison.RunAsync(ServerFactory.Parse(build), LoadPlan.Smoke, TestServers.SampleLaunch()).WaitAsync(TimeSpan.FromSeconds(120));

        Assert.Equal(BuildComparison.Phases, figures.Phases.Select(p => p.Phase));
        Assert.All(figures.Phases, p => Assert.Equal(0, p.Lost));
        Assert.All(figures.Phases, p => Assert.True(p.Load.Total.Sent > 0 && p.Load.Total.Ok > 0, $"{p.Phase}: {p.Load.Total}"));
        var shutdown = Assert.IsType<ShutdownReport>(figures.Shutdown);
        Assert.Equal(0, shutdown.Lost);
        Assert.Equal(build, shutdown.Final.Build);
        Assert.True(figures["flood"].Load.Pipelined.Sent > 0);
    }

    [Fact]
    public async Task Builds_measured_in_turn_each_stop_with_their_own_report()
    {
        // Each build's stop runs beside the next build's warm-up: every report must still be its own build's, complete.
        ServerBuild[] builds = [ServerBuild.Bcl, ServerBuild.Manaloc];
        var all = await BuildComparison.RunAllAsync(builds, LoadPlan.Smoke, TestServers.SampleLaunch()).WaitAsync(TimeSpan.FromSeconds(180));

        Assert.Equal(builds, all.Select(f => f.Build));
        foreach (var figures in all)
        {
            var shutdown = Assert.IsType<ShutdownReport>(figures.Shutdown);
            Assert.Equal(ServerFactory.NameOf(figures.Build), shutdown.Final.Build);
            Assert.Equal(0, shutdown.Lost);
            Assert.All(figures.Phases, p => Assert.Equal(0, p.Lost));
            // The final counters include every phase's requests (each phase's "after" snapshot precedes the stop).
            Assert.True(shutdown.Final.Received >= figures["saturated"].After.Received, $"{figures.Build}: {shutdown}");
        }
    }

    [Fact]
    public async Task Without_the_last_report_the_builds_before_it_still_stop_with_theirs_and_the_last_is_measured_whole()
    {
        ServerBuild[] builds = [ServerBuild.Bcl, ServerBuild.Manaloc];
        var all = await BuildComparison.RunAllAsync(builds, LoadPlan.Smoke, TestServers.SampleLaunch(), lastShutdownReport: false).WaitAsync(TimeSpan.FromSeconds(180));

        Assert.Equal(builds, all.Select(f => f.Build));
        Assert.Equal("bcl", Assert.IsType<ShutdownReport>(all[0].Shutdown).Final.Build);
        Assert.Null(all[1].Shutdown);
        // The last build's figures are all there: every phase measured, nothing lost.
        Assert.Equal(BuildComparison.Phases, all[1].Phases.Select(p => p.Phase));
        Assert.All(all[1].Phases, p => Assert.Equal(0, p.Lost));
    }
}
