using System.Diagnostics;
using System.Text.RegularExpressions;

namespace Manaloc.Lab.Tests;

/// <summary>
/// The README's quick start is the lab's contract with a newcomer: its lab command (no arguments) must run every
/// experiment, and help, version and bad input must answer at once without touching a report. The built lab is
/// started as a process, the way a user starts it.
/// </summary>
public sealed class ReadmeCommandTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("manaloc-readme-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Manaloc.slnx"))) return dir.FullName;
        }
        throw new InvalidOperationException("Manaloc.slnx not found above " + AppContext.BaseDirectory);
    }

    /// <summary>The commands of the README's quick-start code block, in order.</summary>
    internal static IReadOnlyList<string> QuickStartCommands(string readme)
    {
        var section = Regex.Match(readme, @"## Quick start.*?```sh\n(?<block>.*?)```", RegexOptions.Singleline);
        Assert.True(section.Success, "README.md has no '## Quick start' section with a ```sh block");
        return section.Groups["block"].Value.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
    }

    [Fact]
    public void Quick_start_has_the_lab_command_then_the_test_command()
    {
        var commands = QuickStartCommands(File.ReadAllText(Path.Combine(RepositoryRoot(), "README.md")));
        Assert.Equal(2, commands.Count);
        Assert.Equal("dotnet run --project src/Manaloc.Lab -c Release", commands[0]);
        Assert.StartsWith("dotnet test ", commands[1]);
        // .ci/run takes the commands from this block, so CI runs exactly what a newcomer types.
        string ci = File.ReadAllText(Path.Combine(RepositoryRoot(), ".ci", "run"));
        Assert.Contains("README.md", ci);
    }

    [Fact]
    public void No_arguments_parses_to_a_quick_run_of_every_experiment()
    {
        // The README's lab command passes no arguments: the parse must succeed and land on the root command's run.
        var root = Program.BuildCommandLine(TextWriter.Null, TextWriter.Null);
        var parse = root.Parse([]);
        Assert.Empty(parse.Errors);
        Assert.Same(root, parse.CommandResult.Command);
        Assert.NotNull(parse.Action);
    }

    private (int Code, string Out, string Err) RunLab(params string[] args)
    {
        string exe = Path.Combine(AppContext.BaseDirectory, OperatingSystem.IsWindows() ? "Manaloc.Lab.exe" : "Manaloc.Lab");
        var start = new ProcessStartInfo(exe) { WorkingDirectory = _dir, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string arg in args) start.ArgumentList.Add(arg);
        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(TimeSpan.FromSeconds(60)))
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"'Manaloc.Lab {string.Join(' ', args)}' did not exit within 60 s: it started a run");
        }
        return (process.ExitCode, stdout.Result, stderr.Result);
    }

    private void AssertNoReport() =>
        Assert.False(Directory.Exists(Path.Combine(_dir, "artifacts")), "a report folder was written");

    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    [InlineData("-?")]
    [InlineData("run", "--help")]
    public void Help_prints_usage_and_writes_nothing(params string[] args)
    {
        var (code, output, error) = RunLab(args);
        Assert.True(code == 0, error);
        Assert.Contains("Usage:", output);
        Assert.Contains("--quick", output);
        AssertNoReport();
    }

    [Fact]
    public void Version_prints_the_version_and_writes_nothing()
    {
        var (code, output, error) = RunLab("--version");
        Assert.True(code == 0, error);
        Assert.Matches(@"^\d+\.\d+\.\d+", output.Trim());
        AssertNoReport();
    }

    [Theory]
    [InlineData("run", "no-such-experiment")]
    [InlineData("no-such-experiment")]
    [InlineData("--no-such-option")]
    public void Bad_input_is_exit_code_2_with_a_clear_error(params string[] args)
    {
        var (code, output, error) = RunLab(args);
        Assert.Equal(2, code);
        Assert.Equal("", output);
        Assert.StartsWith("error: ", error);
        Assert.Contains("no-such-", error);
        AssertNoReport();
    }
}
