using System.Diagnostics.Metrics;
using System.Net;
using Manaloc.AspNetCore.Diagnostics;
using Manaloc.AspNetCore.Dispatching;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Manaloc.AspNetCore.Tests.Dispatching;

/// <summary>The hosted dispatcher inside real Kestrel on 127.0.0.1, with real HTTP requests.</summary>
public sealed class HostedDispatcherTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    /// <summary>Endpoints: /thread answers the running thread's name; /wait blocks its worker until the test opens the gate.</summary>
    private static Action<WebApplication> Endpoints(ManualResetEventSlim gate, CountdownEvent? started = null) => app =>
    {
        app.MapGet("/thread", (HttpContext context, [FromKeyedServices("cpu")] HostedDispatcher cpu)
            => cpu.RunAsync(context, () => Thread.CurrentThread.Name ?? "?"));
        app.MapGet("/wait", (HttpContext context, [FromKeyedServices("cpu")] HostedDispatcher cpu) => cpu.RunAsync(context, () =>
        {
            started?.Signal();
            gate.Wait(Patience);
            return "done";
        }));
    };

    private static void ByHeader(DedicatedDispatcherOptions o) => o.ClientKey = c => c.Request.Headers["X-Client"].ToString();

    private static HttpRequestMessage Get(string path, string client)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.Add("X-Client", client);
        return request;
    }

    [Fact]
    public async Task Request_work_runs_on_the_dispatchers_threads()
    {
        using var gate = new ManualResetEventSlim(true);
        await using var host = await TestHost.StartAsync(s => s.AddDedicatedDispatcher("cpu", o => o.ThreadCount = 1), Endpoints(gate));
        string thread = await host.Client.GetStringAsync("/thread");
        Assert.Contains("cpu", thread);
        var stats = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu").GetStatistics();
        Assert.Equal(1, stats.Completed);
    }

    [Fact]
    public async Task The_pooled_form_runs_with_its_state_on_the_dispatcher_and_its_items_are_reused_correctly()
    {
        await using var host = await TestHost.StartAsync(s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 2; o.ClientShare = 64; }), app =>
        {
            app.MapGet("/square/{n:int}", (int n, HttpContext context, [FromKeyedServices("cpu")] HostedDispatcher cpu)
                => cpu.RunAsync(context, n, static n => $"{n * n} on {Thread.CurrentThread.Name}"));
            app.MapGet("/fail", (HttpContext context, [FromKeyedServices("cpu")] HostedDispatcher cpu)
                => cpu.RunAsync<string, int>(context, "boom", static message => throw new InvalidOperationException(message)));
        });
        // Sequential and concurrent requests: each pooled item serves many requests; a reused item that kept a previous
        // request's state or result would answer another number.
        for (int n = 1; n <= 20; n++) Assert.StartsWith($"\"{n * n} on cpu", await host.Client.GetStringAsync($"/square/{n}"));
        var answers = await Task.WhenAll(Enumerable.Range(21, 40).Select(n => host.Client.GetStringAsync($"/square/{n}")));
        for (int i = 0; i < answers.Length; i++) Assert.StartsWith($"\"{(21 + i) * (21 + i)} on cpu", answers[i]);
        using var failed = await host.Client.GetAsync("/fail");
        Assert.Equal(HttpStatusCode.InternalServerError, failed.StatusCode);
        var stats = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu").GetStatistics();
        Assert.Equal(61, stats.Completed);
        Assert.Equal(0, stats.ActiveClients);
    }

    [Fact]
    public async Task A_client_over_its_share_gets_429_while_another_client_is_served()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new CountdownEvent(1);
        await using var host = await TestHost.StartAsync(
            s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 1; o.ClientShare = 1; o.ClientLine = 0; ByHeader(o); }), Endpoints(gate, started));
        var flooderFirst = host.Client.SendAsync(Get("/wait", "flooder"));
        Assert.True(started.Wait(Patience));
        using var refused = await host.Client.SendAsync(Get("/thread", "flooder"));
        Assert.Equal(HttpStatusCode.TooManyRequests, refused.StatusCode);
        Assert.Equal(TimeSpan.FromSeconds(1), refused.Headers.RetryAfter?.Delta);
        var polite = host.Client.SendAsync(Get("/thread", "polite"));
        gate.Set();
        using var politeResponse = await polite;
        Assert.Equal(HttpStatusCode.OK, politeResponse.StatusCode);
        using var first = await flooderFirst;
        Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        var stats = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu").GetStatistics();
        Assert.Equal(1, stats.OverShare);
        Assert.Equal(2, stats.Completed);
    }

    [Fact]
    public async Task A_client_over_its_share_waits_in_its_line_and_is_served_after_its_own_work()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new CountdownEvent(1);
        await using var host = await TestHost.StartAsync(
            s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 1; o.ClientShare = 1; o.ClientLine = 1; ByHeader(o); }), Endpoints(gate, started));
        var dispatcher = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu");
        var first = host.Client.SendAsync(Get("/wait", "flooder"));
        Assert.True(started.Wait(Patience));
        var waiting = host.Client.SendAsync(Get("/thread", "flooder"));
        SpinWait.SpinUntil(() => dispatcher.GetStatistics().Waiting == 1, Patience);
        using (var refused = await host.Client.SendAsync(Get("/thread", "flooder"))) // the line (1) is taken
        {
            Assert.Equal(HttpStatusCode.TooManyRequests, refused.StatusCode);
        }
        Assert.Equal(0, dispatcher.Dispatcher.GetStatistics().Queued); // the one in line is not in the dispatcher's queue
        Assert.False(waiting.IsCompleted);
        gate.Set();
        Assert.Equal(HttpStatusCode.OK, (await first).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await waiting).StatusCode);
        Assert.Equal(2, dispatcher.GetStatistics().Completed);
    }

    [Fact]
    public async Task A_full_queue_answers_503()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new CountdownEvent(1);
        await using var host = await TestHost.StartAsync(
            s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 1; o.Capacity = 1; ByHeader(o); }), Endpoints(gate, started));
        var running = host.Client.SendAsync(Get("/wait", "a"));
        Assert.True(started.Wait(Patience));
        var queued = host.Client.SendAsync(Get("/thread", "b"));
        var dispatcher = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu");
        SpinWait.SpinUntil(() => dispatcher.Dispatcher.GetStatistics().Queued == 1, Patience);
        using var full = await host.Client.SendAsync(Get("/thread", "c"));
        Assert.Equal(HttpStatusCode.ServiceUnavailable, full.StatusCode);
        gate.Set();
        Assert.Equal(HttpStatusCode.OK, (await running).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await queued).StatusCode);
        Assert.Equal(1, dispatcher.GetStatistics().Unavailable);
    }

    [Fact]
    public async Task Refusals_are_counted_on_the_meter_created_through_the_hosts_meter_factory()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new CountdownEvent(1);
        await using var host = await TestHost.StartAsync(
            s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 1; o.ClientShare = 1; o.ClientLine = 0; ByHeader(o); }), Endpoints(gate, started));
        var factory = host.Services.GetRequiredService<IMeterFactory>();
        var measurements = new List<(long Value, string? Reason)>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Name == ManalocAspNetCoreTelemetry.DispatcherRefused && instrument.Meter.Scope == factory) l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            string? reason = null;
            foreach (var tag in tags) if (tag.Key == "reason") reason = tag.Value as string;
            lock (measurements) measurements.Add((value, reason));
        });
        listener.Start();
        var first = host.Client.SendAsync(Get("/wait", "x"));
        Assert.True(started.Wait(Patience));
        using var refused = await host.Client.SendAsync(Get("/thread", "x"));
        gate.Set();
        await first;
        lock (measurements) Assert.Contains((1L, (string?)"over_share"), measurements);
    }

    [Fact]
    public async Task Requests_in_flight_when_the_host_stops_are_answered_and_the_dispatcher_drains()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new CountdownEvent(2);
        await using var host = await TestHost.StartAsync(
            s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 2; ByHeader(o); }), Endpoints(gate, started));
        var inFlight = new[] { host.Client.SendAsync(Get("/wait", "a")), host.Client.SendAsync(Get("/wait", "b")) };
        Assert.True(started.Wait(Patience));
        var lifetime = host.Services.GetRequiredService<IHostApplicationLifetime>();
        lifetime.ApplicationStopping.Register(() => gate.Set()); // the work finishes only once the stop has begun
        await host.App.StopAsync();
        foreach (var response in inFlight) Assert.Equal(HttpStatusCode.OK, (await response).StatusCode);
        var dispatcher = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu");
        Assert.False(dispatcher.Dispatcher.IsAcceptingWork);
        Assert.Equal(2, dispatcher.GetStatistics().Completed);
        Assert.True(host.Logs.Contains(LogLevel.Information, "Dedicated dispatcher 'cpu' drained"), string.Join("\n", host.Logs.Entries));
    }

    [Fact]
    public async Task Work_that_did_not_run_by_the_drain_deadline_is_answered_503_and_logged()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new CountdownEvent(1);
        // The server's grace period (the host's shutdown timeout) ends before the worker is free, then the drain deadline passes too.
        await using var host = await TestHost.StartAsync(
            s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 1; o.DrainTimeout = TimeSpan.FromMilliseconds(200); ByHeader(o); }),
            Endpoints(gate, started), shutdownTimeout: TimeSpan.FromSeconds(1));
        var dispatcher = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu");
        var running = host.Client.SendAsync(Get("/wait", "a"));
        Assert.True(started.Wait(Patience));
        var waiting = new[] { host.Client.SendAsync(Get("/thread", "b")), host.Client.SendAsync(Get("/thread", "c")) };
        SpinWait.SpinUntil(() => dispatcher.Dispatcher.GetStatistics().Queued == 2, Patience);
        var notRun = new List<string>();
        dispatcher.Dispatcher.Post(() => notRun.Add("ran")); // work that is not a request's: reported too
        await host.App.StopAsync();
        // The warning is written after the count: wait for it.
        SpinWait.SpinUntil(() => host.Logs.Contains(LogLevel.Warning, "did not run before the drain deadline"), Patience);
        gate.Set();
        Assert.Equal(3, dispatcher.GetStatistics().Abandoned);
        Assert.Empty(notRun);
        Assert.True(host.Logs.Contains(LogLevel.Warning, "3 accepted work items did not run before the drain deadline"), string.Join("\n", host.Logs.Entries));
        Assert.True(host.Logs.Contains(LogLevel.Warning, "2 requests were answered 503, 1 other items were not run"), string.Join("\n", host.Logs.Entries));
        foreach (var task in waiting.Append(running)) await Assert.ThrowsAnyAsync<Exception>(async () => (await task).EnsureSuccessStatusCode());
    }

    [Fact]
    public async Task Pooled_work_that_did_not_run_by_the_drain_deadline_is_answered_503_and_logged()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new CountdownEvent(1);
        // As above, through the state-passing form: its items are pooled, and an abandoned one must answer and go back to the pool.
        await using var host = await TestHost.StartAsync(
            s => s.AddDedicatedDispatcher("cpu", o => { o.ThreadCount = 1; o.DrainTimeout = TimeSpan.FromMilliseconds(200); ByHeader(o); }), app =>
            {
                app.MapGet("/square/{n:int}", (int n, HttpContext context, [FromKeyedServices("cpu")] HostedDispatcher cpu)
                    => cpu.RunAsync(context, n, static n => n * n));
                app.MapGet("/wait", (HttpContext context, [FromKeyedServices("cpu")] HostedDispatcher cpu) => cpu.RunAsync(context, (gate, started), static s =>
                {
                    s.started.Signal();
                    s.gate.Wait(Patience);
                    return -1;
                }));
            }, shutdownTimeout: TimeSpan.FromSeconds(1));
        var dispatcher = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu");
        var running = host.Client.SendAsync(Get("/wait", "a"));
        Assert.True(started.Wait(Patience));
        var waiting = new[] { host.Client.SendAsync(Get("/square/2", "b")), host.Client.SendAsync(Get("/square/3", "c")) };
        SpinWait.SpinUntil(() => dispatcher.Dispatcher.GetStatistics().Queued == 2, Patience);
        await host.App.StopAsync();
        SpinWait.SpinUntil(() => host.Logs.Contains(LogLevel.Warning, "did not run before the drain deadline"), Patience);
        gate.Set();
        Assert.Equal(2, dispatcher.GetStatistics().Abandoned);
        Assert.True(host.Logs.Contains(LogLevel.Warning, "2 requests were answered 503, 0 other items were not run"), string.Join("\n", host.Logs.Entries));
        foreach (var task in waiting.Append(running)) await Assert.ThrowsAnyAsync<Exception>(async () => (await task).EnsureSuccessStatusCode());
        // A second stop sees the dispatcher's cached leftovers again: they were answered once, and their items (back in the
        // pool, maybe serving other requests) are not abandoned twice.
        await host.App.StopAsync();
        Assert.Equal(2, dispatcher.GetStatistics().Abandoned);
        Assert.Single(host.Logs.Entries, e => e.Message.Contains("did not run before the drain deadline", StringComparison.Ordinal));
    }

    [Fact]
    public void Registering_two_dispatchers_of_one_name_is_refused()
    {
        var services = new ServiceCollection();
        services.AddDedicatedDispatcher("cpu");
        var e = Assert.Throws<ArgumentException>(() => services.AddDedicatedDispatcher("cpu"));
        Assert.Contains("'cpu'", e.Message);
    }

    [Fact]
    public async Task Before_the_host_starts_the_dispatcher_is_not_there_and_requests_would_get_503()
    {
        await using var app = TestHost.Build(s => s.AddDedicatedDispatcher("cpu"));
        var dispatcher = app.Services.GetRequiredKeyedService<HostedDispatcher>("cpu");
        var e = Assert.Throws<InvalidOperationException>(() => dispatcher.Dispatcher);
        Assert.Contains("'cpu'", e.Message);
        var result = await dispatcher.RunAsync(new DefaultHttpContext(), () => 1);
        Assert.Equal(503, Assert.IsAssignableFrom<IStatusCodeHttpResult>(result).StatusCode);
    }
}
