using System.Diagnostics;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>
/// The lab's build away from the repository: the lab's build output (what <c>dotnet build src/Manaloc.Lab -c … -o DIR</c>
/// puts in DIR) copied into a temporary directory outside it, then <c>dotnet DIR/Manaloc.Lab.dll run --smoke</c> from
/// another, which runs every experiment end to end (the HTTP service and the request server in child lab processes, the
/// GC modes' children) and writes its report. Built and run once for the test class that shares it; its report is what
/// the tests read.
/// </summary>
/// <remarks>
/// The output is copied rather than rebuilt with <c>-o</c>: a build with another output path compiles every project again
/// (the analyzers' paths change), minutes on a shared machine, for the same files. The copy is checked to be the lab this
/// test was built against (the same Manaloc.Lab.dll as the test's own reference).
/// </remarks>
public sealed class OutOfTreeLab : IDisposable
{
    // Together under the 15 minutes after which CI's hang blame stops a test host (Directory.Build.props).
    private static readonly TimeSpan BuildLimit = TimeSpan.FromMinutes(5);
    private static readonly TimeSpan RunLimit = TimeSpan.FromMinutes(8);
    private readonly string _root = Directory.CreateTempSubdirectory("manaloc-lab-out-of-tree-").FullName;

    public OutOfTreeLab()
    {
        string repository = RepositoryRoot();
        BuildDirectory = Path.Combine(_root, "build");
        string work = Directory.CreateDirectory(Path.Combine(_root, "work")).FullName;
        if (IsUnder(_root, repository)) throw new InvalidOperationException($"The temporary directory {_root} is inside the repository {repository}: the test would prove nothing.");
#if DEBUG
        const string Configuration = "Debug";
#else
        const string Configuration = "Release";
#endif
        string output = Path.Combine(repository, "src", "Manaloc.Lab", "bin", Configuration, "net10.0");
        string referenced = Path.Combine(AppContext.BaseDirectory, "Manaloc.Lab.dll");
        if (!SameFile(Path.Combine(output, "Manaloc.Lab.dll"), referenced))
        {
            // Not built yet, or built since this test was: build it (incrementally, in place) before copying.
            Build = Run(ChildProcess.FindDotnetHost(), repository, BuildLimit,
                "build", Path.Combine(repository, "src", "Manaloc.Lab", "Manaloc.Lab.csproj"), "-c", Configuration, "--nologo", "-v", "quiet", "--disable-build-servers");
            if (Build.Code != 0) return;
        }
        Copy(output, BuildDirectory);
        // From a working directory outside the repository too: nothing may be found relative to it.
        Lab = Run(ChildProcess.FindDotnetHost(), work, RunLimit,
            "exec", Path.Combine(BuildDirectory, "Manaloc.Lab.dll"), "run", "--smoke", "--out", Path.Combine(work, "report"));
        string results = Path.Combine(work, "report", "results.json");
        if (File.Exists(results)) Report = ReportWriter.FromJson(File.ReadAllText(results));
    }

    /// <summary>Where the lab was built.</summary>
    public string BuildDirectory { get; }

    /// <summary>The build's exit code and output (0 and nothing when the lab's build was already the one this test references).</summary>
    public (int Code, string Output) Build { get; }

    /// <summary>The smoke run's exit code and output; default when the build failed.</summary>
    public (int Code, string Output) Lab { get; }

    /// <summary>The smoke run's report; null when it wrote none.</summary>
    public LabReport? Report { get; }

    /// <summary>Fails with the build's or the run's output unless both succeeded and wrote a report.</summary>
    public LabReport RequireReport()
    {
        Assert.True(Build.Code == 0, $"dotnet build src/Manaloc.Lab failed ({Build.Code}):\n{Tail(Build.Output)}");
        Assert.True(Report is not null, $"the out-of-tree smoke run wrote no report (exit {Lab.Code}):\n{Tail(Lab.Output)}");
        return Report!;
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_root, recursive: true);
        }
        catch (IOException)
        {
            // A child that outlived the run may still hold a file; the temporary directory is the system's to clear.
        }
    }

    internal static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Manaloc.slnx"))) return dir.FullName;
        }
        throw new InvalidOperationException("Manaloc.slnx not found above " + AppContext.BaseDirectory);
    }

    private static bool SameFile(string a, string b)
        => File.Exists(a) && File.Exists(b) && File.ReadAllBytes(a).AsSpan().SequenceEqual(File.ReadAllBytes(b));

    private static void Copy(string from, string to)
    {
        foreach (string directory in Directory.GetDirectories(from, "*", SearchOption.AllDirectories))
            Directory.CreateDirectory(Path.Combine(to, Path.GetRelativePath(from, directory)));
        Directory.CreateDirectory(to);
        foreach (string file in Directory.GetFiles(from, "*", SearchOption.AllDirectories))
            File.Copy(file, Path.Combine(to, Path.GetRelativePath(from, file)));
    }

    private static bool IsUnder(string path, string directory)
        => Path.GetFullPath(path).StartsWith(Path.GetFullPath(directory).TrimEnd(Path.DirectorySeparatorChar) + Path.DirectorySeparatorChar, StringComparison.Ordinal);

    private static string Tail(string? text) => text is null ? "" : text.Length <= 6000 ? text : "…" + text[^6000..];

    private static (int Code, string Output) Run(string program, string workingDirectory, TimeSpan limit, params string[] args)
    {
        var start = new ProcessStartInfo(program) { WorkingDirectory = workingDirectory, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string arg in args) start.ArgumentList.Add(arg);
        // No build server or node outlives the test.
        start.Environment["MSBUILDDISABLENODEREUSE"] = "1";
        start.Environment["DOTNET_CLI_USE_MSBUILD_SERVER"] = "0";
        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(limit))
        {
            process.Kill(entireProcessTree: true);
            process.WaitForExit();
            return (-1, $"'{string.Join(' ', args)}' did not finish within {limit.TotalMinutes:0} minutes (killed).\n{stdout.Result}{stderr.Result}");
        }
        return (process.ExitCode, stdout.Result + stderr.Result);
    }
}
