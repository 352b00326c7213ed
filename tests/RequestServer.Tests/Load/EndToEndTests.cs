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
        Assert.Equal(0, figures.Shutdown.Lost);
        Assert.Equal(build, figures.Shutdown.Final.Build);
        Assert.True(figures["flood"].Load.Pipelined.Sent > 0);
    }
}
