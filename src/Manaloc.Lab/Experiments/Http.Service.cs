using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Manaloc.Lab.Harness;
using Manaloc.Lab.RequestServer;

namespace Manaloc.Lab.Experiments;

/// <summary>The service's own figures at one moment (from its /stats endpoint).</summary>
internal sealed record HttpServiceStats(long AllocatedBytes, int GcCount, double GcPauseMs, long WorkingSet, long PeakWorkingSet, long Served, long PoolRents, long PoolOutstanding, long PoolIdleBytes, long GcCommittedBytes, long IdleReleases);

/// <summary>
/// samples/HttpApi as a child process on 127.0.0.1 (a free port): found beside the lab's build (built with
/// <c>dotnet build</c> when it is not there), started with its build flag, asked for its figures over HTTP,
/// and stopped gracefully by closing its standard input. The lab has no project reference to the sample:
/// nothing under src/ depends on a sample or an executable.
/// </summary>
internal sealed class HttpService : IDisposable
{
    private static readonly Lock s_buildLock = new();
    private readonly ListeningProcess _child;
    private readonly HttpClient _client;

    private HttpService(ListeningProcess child)
    {
        _child = child;
        _client = new HttpClient { BaseAddress = new Uri($"http://{child.EndPoint}"), Timeout = TimeSpan.FromSeconds(30) };
    }

    public IPEndPoint Endpoint => _child.EndPoint;

    /// <summary>Path of HttpApi.dll for the lab's configuration, built first if missing.</summary>
    public static string Locate(Action<string> status)
    {
        string configuration = AppContext.BaseDirectory.Contains($"{Path.DirectorySeparatorChar}Debug{Path.DirectorySeparatorChar}", StringComparison.Ordinal) ? "Debug" : "Release";
        var root = new DirectoryInfo(AppContext.BaseDirectory);
        while (root is not null && !File.Exists(Path.Combine(root.FullName, "Manaloc.slnx"))) root = root.Parent;
        if (root is null) throw new InvalidOperationException("http: the repository (Manaloc.slnx) was not found above the lab's directory, so samples/HttpApi cannot be found.");
        string project = Path.Combine(root.FullName, "samples", "HttpApi", "HttpApi.csproj");
        string dll = Path.Combine(root.FullName, "samples", "HttpApi", "bin", configuration, "net10.0", "HttpApi.dll");
        lock (s_buildLock)
        {
            if (File.Exists(dll)) return dll;
            status($"building samples/HttpApi ({configuration})");
            var build = Process.Start(new ProcessStartInfo(ChildProcess.FindDotnetHost(), ["build", project, "-c", configuration, "--nologo", "-v", "quiet"])
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            })!;
            var output = build.StandardOutput.ReadToEndAsync();
            var errors = build.StandardError.ReadToEndAsync();
            if (!build.WaitForExit(TimeSpan.FromMinutes(5)))
            {
                build.Kill(entireProcessTree: true);
                throw new InvalidOperationException("http: building samples/HttpApi took more than 5 minutes.");
            }
            if (build.ExitCode != 0 || !File.Exists(dll))
                throw new InvalidOperationException($"http: building samples/HttpApi failed (exit {build.ExitCode}): {output.Result}{errors.Result}");
            return dll;
        }
    }

    /// <summary>Starts the service in <paramref name="build"/> (the Manaloc build with its idle release after <paramref name="idleRelease"/> without a request) and waits for its "listening on" line.</summary>
    public static HttpService Start(string dll, string build, int share, TimeSpan idleRelease)
    {
        var start = new ProcessStartInfo(ChildProcess.FindDotnetHost());
        foreach (string arg in new[] { "exec", dll, "--build", build, "--port", "0", "--share", share.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--idle-release", idleRelease.TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture), "--stop-on-stdin-eof" })
            start.ArgumentList.Add(arg);
        foreach (string key in new[] { "DOTNET_gcServer", "DOTNET_GCgen0size", "DOTNET_gcConcurrent" }) start.Environment.Remove(key);
        var child = ListeningProcess.StartAsync(start, $"http: {build} service", ListeningAt, TimeSpan.FromSeconds(60)).GetAwaiter().GetResult();
        return new HttpService(child);
    }

    /// <summary>The endpoint in HttpApi's first line, "HttpApi listening on http://127.0.0.1:PORT (build …)".</summary>
    private static IPEndPoint? ListeningAt(string line)
    {
        int at = line.IndexOf("listening on http://", StringComparison.Ordinal);
        if (at < 0) return null;
        var uri = new Uri(line[(at + "listening on ".Length)..].Split(' ')[0]);
        return new IPEndPoint(IPAddress.Parse(uri.Host), uri.Port);
    }

    /// <summary>The service's figures now.</summary>
    public async Task<HttpServiceStats> StatsAsync(CancellationToken cancellation)
    {
        using var response = await _client.GetAsync("/stats", cancellation).ConfigureAwait(false);
        response.EnsureSuccessStatusCode();
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync(cancellation).ConfigureAwait(false));
        var r = json.RootElement;
        return new HttpServiceStats(r.GetProperty("allocatedBytes").GetInt64(),
            r.GetProperty("gen0").GetInt32() + r.GetProperty("gen1").GetInt32() + r.GetProperty("gen2").GetInt32(), r.GetProperty("gcPauseMs").GetDouble(),
            r.GetProperty("workingSet").GetInt64(), r.GetProperty("peakWorkingSet").GetInt64(), r.GetProperty("served").GetInt64(),
            r.GetProperty("poolRents").GetInt64(), r.GetProperty("poolOutstanding").GetInt64(), r.GetProperty("poolIdleBytes").GetInt64(),
            r.GetProperty("gcCommittedBytes").GetInt64(), r.GetProperty("idleReleases").GetInt64());
    }

    /// <summary>Asks for a graceful stop (closes stdin) and waits; the service's last line, or what went wrong.</summary>
    public string Stop()
    {
        _client.Dispose();
        StoppedProcess stopped;
        try
        {
            stopped = _child.StopAsync(TimeSpan.FromSeconds(30)).GetAwaiter().GetResult();
        }
        catch (TimeoutException)
        {
            return "did not stop within 30 s of its stdin closing (killed)";
        }
        string last = stopped.Output.Select(line => line.Trim()).LastOrDefault(line => line.Length > 0) ?? "";
        return stopped.ExitCode == 0 ? $"stopped cleanly ({last})" : $"exited with code {stopped.ExitCode} ({last})";
    }

    public void Dispose()
    {
        _client.Dispose();
        _child.Dispose();
    }
}
