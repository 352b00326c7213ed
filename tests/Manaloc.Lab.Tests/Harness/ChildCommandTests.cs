using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class ChildCommandTests
{
    [Fact]
    public void What_the_parent_writes_the_child_reads_back()
    {
        var command = new ChildCommand("live-set", "run", RunMode.Full, 5, [1, 2, 4], ["--variant", "class objects", "--", "x"]);
        var args = command.ToArguments();
        Assert.Equal(ChildCommand.Verb, args[0]);
        Assert.True(ChildCommand.TryParse(args.Skip(1).ToArray(), out var back, out string? error), error);
        Assert.Equal(command.Experiment, back!.Experiment);
        Assert.Equal(command.Key, back.Key);
        Assert.Equal(RunMode.Full, back.Mode);
        Assert.Equal(5, back.Launches);
        Assert.Equal([1, 2, 4], back.Threads);
        Assert.Equal(["--variant", "class objects", "--", "x"], back.Arguments); // after "--", options are the part's own
    }

    [Fact]
    public void A_launch_reads_its_index_and_the_run_s_settings()
    {
        Assert.True(ChildCommand.TryParse(["gc-modes", Experiment.LaunchKey, "--mode", "quick", "--launches", "3", "--threads", "1,2", "--", "2"], out var command, out _));
        var settings = command!.Settings();
        Assert.Equal(RunMode.Quick, settings.Mode);
        Assert.Equal(3, settings.Launches);
        Assert.Equal(2, settings.Launch);
        Assert.Equal([1, 2], settings.ThreadCounts);
    }

    [Fact]
    public void Options_may_come_anywhere_before_the_separator_and_default_to_a_quick_run()
    {
        Assert.True(ChildCommand.TryParse(["--mode", "SMOKE", "clock-allocations", "measure"], out var command, out _));
        Assert.Equal(("clock-allocations", "measure", RunMode.Smoke), (command!.Experiment, command.Key, command.Mode));
        Assert.Empty(command.Arguments);
        Assert.True(ChildCommand.TryParse(["server", "serve", "--"], out var plain, out _));
        Assert.Equal((RunMode.Quick, (int?)null, (IReadOnlyList<int>?)null), (plain!.Mode, plain.Launches, plain.Threads));
        Assert.Equal(0, plain.Settings().Launch);
    }

    [Theory]
    [InlineData(new[] { "only-one" }, "an experiment and a key")]
    [InlineData(new[] { "x", "y", "--mode", "fast" }, "'fast'")]
    [InlineData(new[] { "x", "y", "--mode", "1" }, "'1'")]
    [InlineData(new[] { "x", "y", "--launches", "0" }, "--launches")]
    [InlineData(new[] { "x", "y", "--threads", "1,z" }, "'z'")]
    [InlineData(new[] { "x", "y", "--verbose", "1" }, "'--verbose'")]
    [InlineData(new[] { "x", "y", "--mode" }, "--mode expects a value")]
    public void A_malformed_line_is_refused_naming_the_token(string[] args, string named)
    {
        Assert.False(ChildCommand.TryParse(args, out var command, out string? error));
        Assert.Null(command);
        Assert.Contains(named, error);
    }

    [Fact]
    public void The_lab_refuses_a_malformed_child_line_with_the_usage_code()
    {
        var stdout = new StringWriter();
        var stderr = new StringWriter();
        Assert.Equal(Program.UsageError, Program.Run(["child", "clock-allocations", "measure", "--mode", "fast"], stdout, stderr));
        Assert.StartsWith("error: --mode", stderr.ToString());
        Assert.Empty(stdout.ToString());
    }
}
