using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Manaloc.Lab.Harness;
using Manaloc.Lab.RequestServer;

namespace Manaloc.Lab.Experiments;

/// <summary>The service's own figures at one moment (from its /stats endpoint).</summary>
internal sealed record HttpServiceStats(long AllocatedBytes, int GcCount, double GcPauseMs, long WorkingSet, long PeakWorkingSet, long Served, long PoolRents, long PoolOutstanding, long PoolIdleBytes, long GcCommittedBytes, long IdleReleases);

/// <summary>
/// The HttpApi service (src/Manaloc.Lab.HttpApi, in the lab's build) in a child lab process on 127.0.0.1 (a free port):
/// <c>child http serve -- --build …</c>, started with its build flag, asked for its figures over HTTP, and stopped
/// gracefully by closing its standard input. The child runs with the GC an ASP.NET Core application gets from the Web
/// SDK (server GC, dynamic adaptation), as samples/HttpApi, the same service's command line, does.
/// </summary>
internal sealed class HttpService : IDisposable
{
    /// <summary>The GC settings the Web SDK writes into a web application's runtimeconfig.json (ServerGarbageCollection, GarbageCollectionAdaptationMode).</summary>
    private static readonly (string Key, string Value)[] WebApplicationGc = [("DOTNET_gcServer", "1"), ("DOTNET_GCDynamicAdaptationMode", "1")];

    private readonly ListeningProcess _child;
    private readonly HttpClient _client;

    private HttpService(ListeningProcess child)
    {
        _child = child;
        _client = new HttpClient { BaseAddress = new Uri($"http://{child.EndPoint}"), Timeout = TimeSpan.FromSeconds(30) };
    }

    public IPEndPoint Endpoint => _child.EndPoint;

    /// <summary>
    /// Starts the service in <paramref name="build"/> (the Manaloc build with its idle release after <paramref name="idleRelease"/>
    /// without a request) through the lab's child mode, <c>child <paramref name="experiment"/> <paramref name="key"/> -- …</c>,
    /// and waits for its "listening on" line.
    /// </summary>
    public static HttpService Start(string experiment, string key, string build, int share, TimeSpan idleRelease)
    {
        var start = new ProcessStartInfo(ChildProcess.FindDotnetHost());
        foreach (string arg in new[] { "exec", ChildProcess.LabAssemblyPath, "child", experiment, key, "--",
            "--build", build, "--port", "0", "--share", share.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--idle-release", idleRelease.TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture), "--stop-on-stdin-eof" })
            start.ArgumentList.Add(arg);
        foreach (string variable in new[] { "DOTNET_gcServer", "DOTNET_GCgen0size", "DOTNET_gcConcurrent", "DOTNET_GCDynamicAdaptationMode" }) start.Environment.Remove(variable);
        foreach (var (name, value) in WebApplicationGc) start.Environment[name] = value;
        var child = ListeningProcess.StartAsync(start, $"http: {build} service", ListeningAt, TimeSpan.FromSeconds(60)).GetAwaiter().GetResult();
        return new HttpService(child);
    }

    /// <summary>The endpoint in the service's first line, "HttpApi listening on http://127.0.0.1:PORT (build …)".</summary>
    private static IPEndPoint? ListeningAt(string line)
    {
        if (!line.StartsWith(HttpApi.ServiceHost.ListeningPrefix, StringComparison.Ordinal)) return null;
        var uri = new Uri(line[HttpApi.ServiceHost.ListeningPrefix.Length..].Split(' ')[0]);
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

    /// <summary>
    /// Waits until the service has run an idle release beyond its first <paramref name="releasesBefore"/> (the Manaloc build
    /// prints a line after each: asking /stats would itself be the request that ends the quiet it waits for), or until
    /// <paramref name="within"/> has passed; true when the release came.
    /// </summary>
    public async Task<bool> IdleReleaseAsync(long releasesBefore, TimeSpan within, CancellationToken cancellation)
    {
        if (within <= TimeSpan.Zero) within = TimeSpan.Zero;
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        timeout.CancelAfter(within);
        try
        {
            await _child.WaitForLineAsync(line => line.StartsWith(HttpApi.ServiceHost.IdleReleasePrefix, StringComparison.Ordinal)
                && long.TryParse(line.AsSpan(HttpApi.ServiceHost.IdleReleasePrefix.Length), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out long releases)
                && releases > releasesBefore, timeout.Token).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException) when (!cancellation.IsCancellationRequested)
        {
            return false;
        }
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
        string last = stopped.Output.Select(line => line.Trim()).LastOrDefault(line => line.StartsWith(HttpApi.ServiceHost.StoppedPrefix, StringComparison.Ordinal))
            ?? stopped.Output.Select(line => line.Trim()).LastOrDefault(line => line.Length > 0) ?? "";
        return stopped.ExitCode == 0 ? $"stopped cleanly ({last})" : $"exited with code {stopped.ExitCode} ({last})";
    }

    public void Dispose()
    {
        _client.Dispose();
        _child.Dispose();
    }
}
