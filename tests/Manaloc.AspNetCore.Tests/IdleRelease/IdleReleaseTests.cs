using Manaloc.AspNetCore.IdleRelease;
using Manaloc.AspNetCore.Kestrel;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.AspNetCore.Tests.IdleRelease;

/// <summary>The idle release on a real Kestrel (127.0.0.1, port 0), its clock a fake one the test moves.</summary>
public sealed class IdleReleaseTests
{
    private static readonly TimeSpan Quiet = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan Period = Quiet / 4;

    private static Task<TestHost> StartAsync(FakeTimeProvider clock, Action<IServiceCollection>? more = null, Action<IdleReleaseOptions>? configure = null)
        => TestHost.StartAsync(s =>
        {
            s.AddSingleton<TimeProvider>(clock);
            more?.Invoke(s);
            s.AddManalocIdleRelease(o =>
            {
                o.QuietAfter = Quiet;
                configure?.Invoke(o);
            });
        }, app => app.MapGet("/", () => "ok"));

    /// <summary>Moves the clock one check period at a time (the fake clock fires a periodic timer once per move).</summary>
    private static void Pass(FakeTimeProvider clock, TimeSpan time)
    {
        for (var moved = TimeSpan.Zero; moved < time; moved += Period) clock.Advance(Period);
    }

    /// <summary>One request, answered and completed: its response's OnCompleted (which ends its in-flight count) runs just after the client has the answer.</summary>
    private static async Task GetAsync(TestHost host)
    {
        Assert.Equal("ok", await host.Client.GetStringAsync("/"));
        var release = host.Services.GetRequiredService<IdleReleaseService>();
        await WaitUntilAsync(() => release.InFlight == 0);
    }

    [Fact]
    public async Task A_quiet_spell_releases_once_and_the_next_request_arms_it_again()
    {
        var clock = new FakeTimeProvider();
        await using var host = await StartAsync(clock);
        var release = host.Services.GetRequiredService<IdleReleaseService>();

        await GetAsync(host);
        clock.Advance(Period); // this check sees the request: the quiet clock starts here
        Assert.Equal(0, release.Releases);
        Pass(clock, Quiet - Period); // quiet for less than QuietAfter since that check
        Assert.Equal(0, release.Releases);
        clock.Advance(Period); // quiet for QuietAfter
        Assert.Equal(1, release.Releases);
        Pass(clock, Quiet * 6); // still quiet: nothing more to release
        Assert.Equal(1, release.Releases);
        Assert.True(host.Logs.Contains(LogLevel.Information, "Idle release: no request for 00:00:10"));

        await GetAsync(host);
        clock.Advance(Period);
        Assert.Equal(1, release.Releases);
        Pass(clock, Quiet);
        Assert.Equal(2, release.Releases);
    }

    [Fact]
    public async Task Requests_closer_together_than_the_quiet_time_never_release()
    {
        var clock = new FakeTimeProvider();
        await using var host = await StartAsync(clock);
        var release = host.Services.GetRequiredService<IdleReleaseService>();
        for (int i = 0; i < 12; i++)
        {
            await GetAsync(host);
            Pass(clock, Quiet - Period); // three checks, shorter than the quiet time
        }
        Assert.Equal(0, release.Releases);
    }

    [Fact]
    public async Task A_request_still_running_holds_the_release_off_until_it_completes()
    {
        var clock = new FakeTimeProvider();
        var finish = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var host = await TestHost.StartAsync(s =>
        {
            s.AddSingleton<TimeProvider>(clock);
            s.AddManalocIdleRelease(o => o.QuietAfter = Quiet);
        }, app => app.MapGet("/slow", async () =>
        {
            started.SetResult();
            await finish.Task;
            return "done";
        }));
        var release = host.Services.GetRequiredService<IdleReleaseService>();

        var slow = host.Client.GetStringAsync("/slow");
        await started.Task.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(1, release.InFlight);
        Pass(clock, Quiet * 3); // no request starts, but one runs all along: a collection now would pause it
        Assert.Equal(0, release.Releases);

        finish.SetResult();
        Assert.Equal("done", await slow.WaitAsync(TimeSpan.FromSeconds(30)));
        await WaitUntilAsync(() => release.InFlight == 0); // OnCompleted runs after the response is sent
        Pass(clock, Quiet + Period);
        Assert.Equal(1, release.Releases);
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        for (int i = 0; i < 3000 && !condition(); i++) await Task.Delay(10);
        Assert.True(condition(), "the condition held within 30 s");
    }

    [Fact]
    public async Task It_trims_Kestrels_Manaloc_pool_and_collects_unless_told_not_to()
    {
        var clock = new FakeTimeProvider();
        await using var host = await StartAsync(clock, s => s.AddManalocKestrelMemoryPool(), o => o.CollectGarbage = false);
        var release = host.Services.GetRequiredService<IdleReleaseService>();
        var pools = host.Services.GetRequiredService<ManalocMemoryPoolFactory>();
        for (int i = 0; i < 8; i++) await GetAsync(host);
        Assert.True(pools.GetStatistics().Rents > 0, "Kestrel rented from Manaloc's pool");
        Assert.True(pools.GetStatistics().RetainedBytes > 0, "the pool keeps the returned blocks idle");
        // Kestrel gives a connection's last blocks back just after the response; a block returned after the trim would
        // (rightly) stay idle, so the release runs once every block is back.
        await WaitUntilAsync(() => pools.GetStatistics().Outstanding == 0);

        Pass(clock, Quiet + Period + Period);
        Assert.Equal(1, release.Releases);
        var logged = host.Logs.Entries.Single(e => e.Message.StartsWith("Idle release", StringComparison.Ordinal)).Message;
        Assert.Contains("Kestrel's pools trimmed", logged);
        Assert.Equal(0, pools.GetStatistics().RetainedBytes); // every idle block given back, those on Kestrel's quiet threads too
        Assert.Contains("no collection (CollectGarbage is off)", logged);
    }

    [Fact]
    public async Task Without_Manalocs_Kestrel_pool_it_still_collects()
    {
        var clock = new FakeTimeProvider();
        await using var host = await StartAsync(clock);
        int fullCollections = GC.CollectionCount(GC.MaxGeneration);
        Pass(clock, Quiet + Period + Period); // quiet from the start
        Assert.Equal(1, host.Services.GetRequiredService<IdleReleaseService>().Releases);
        Assert.True(GC.CollectionCount(GC.MaxGeneration) > fullCollections, "the release ran a full collection");
        var logged = host.Logs.Entries.Single(e => e.Message.StartsWith("Idle release", StringComparison.Ordinal)).Message;
        Assert.Contains("no Manaloc pool to trim", logged);
        Assert.Contains("GC committed", logged);
    }

    [Theory]
    [InlineData("00:00:00.05")]
    [InlineData("2.00:00:00")]
    public async Task A_quiet_time_out_of_range_fails_the_start_naming_the_key(string value)
    {
        await using var app = TestHost.Build(s => s.AddManalocIdleRelease(), configuration: new Dictionary<string, string?> { ["Manaloc:IdleRelease:QuietAfter"] = value });
        var e = await Assert.ThrowsAsync<OptionsValidationException>(() => app.StartAsync());
        Assert.Contains($"Manaloc:IdleRelease:QuietAfter must be between 00:00:00.1 and 1.00:00:00 (was {TimeSpan.Parse(value, System.Globalization.CultureInfo.InvariantCulture)})", e.Message);
    }

    [Fact]
    public async Task Registering_twice_adds_one_watch()
    {
        var clock = new FakeTimeProvider();
        await using var host = await TestHost.StartAsync(s =>
        {
            s.AddSingleton<TimeProvider>(clock);
            s.AddManalocIdleRelease(o => o.QuietAfter = Quiet).AddManalocIdleRelease();
        }, app => app.MapGet("/", () => "ok"));
        Assert.Single(host.Services.GetServices<Microsoft.AspNetCore.Hosting.IStartupFilter>().OfType<IdleReleaseService.Filter>());
        Pass(clock, Quiet + Period + Period);
        Assert.Equal(1, host.Services.GetRequiredService<IdleReleaseService>().Releases);
    }
}
