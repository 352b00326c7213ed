using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class ChildProcessTests
{
    [Fact]
    public void A_child_runs_with_the_given_environment_and_sends_its_measurements_back()
    {
        var output = ChildProcess.Run(
            ["child", "clock-allocations", "measure", "--mode", "smoke"],
            new Dictionary<string, string?> { ["TZ"] = "Etc/UTC", ["DOTNET_gcServer"] = "1" },
            TimeSpan.FromMinutes(1));
        Assert.NotEmpty(output.Measurements);
        Assert.All(output.Measurements, m => Assert.Equal(2, m.Statistics.Count)); // smoke mode reached the child
        Assert.NotNull(output.Machine);
        Assert.StartsWith("server", output.Machine!.GcMode); // the environment took effect in the child
        Assert.True(output.Machine.CallsCountedFromStart); // every child counts calls for tiering from the start
    }

    [Fact]
    public void The_experiment_environment_can_take_the_tiering_setting_away()
    {
        var output = ChildProcess.Run(
            ["child", "clock-allocations", "measure", "--mode", "smoke"],
            new Dictionary<string, string?> { [ChildProcess.CallCountingDelayVariable] = null },
            TimeSpan.FromMinutes(1));
        Assert.False(output.Machine!.CallsCountedFromStart);
    }

    [Fact]
    public void A_child_that_fails_is_reported_with_its_exit_code()
    {
        var e = Assert.Throws<ChildProcessException>(() =>
            ChildProcess.Run(["child", "no-such-experiment", "x"], null, TimeSpan.FromMinutes(1)));
        Assert.Contains("exited with code 2", e.Message);
        Assert.Contains("no-such-experiment", e.Message);
    }

    [Fact]
    public void A_child_part_that_does_not_exist_fails_cleanly()
    {
        var e = Assert.Throws<ChildProcessException>(() =>
            ChildProcess.Run(["child", "clock-allocations", "no-such-part"], null, TimeSpan.FromMinutes(1)));
        Assert.Contains("exited with code 1", e.Message);
        Assert.Contains("NotSupportedException", e.Message);
        Assert.Contains("no-such-part", e.Message);
    }

    [Fact]
    public void The_host_is_a_dotnet_executable()
        => Assert.StartsWith("dotnet", Path.GetFileName(ChildProcess.FindDotnetHost()));
}
