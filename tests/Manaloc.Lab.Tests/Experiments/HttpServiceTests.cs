using Manaloc.Lab.Experiments;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The idle wait's event: the Manaloc build's idle release, announced on the service's output, ends the wait; a build without one waits out its limit.</summary>
public sealed class HttpServiceTests
{
    [Fact]
    public async Task The_wait_ends_on_the_manaloc_build_s_next_idle_release_and_the_stats_then_count_it()
    {
        using var service = HttpService.Start("http", "serve", "manaloc", share: 1, idleRelease: TimeSpan.FromSeconds(0.2));
        // A request (this one) ends any quiet so far; the release then comes 0.2-0.25 s after it.
        var before = await service.StatsAsync(CancellationToken.None);

        Assert.True(await service.IdleReleaseAsync(before.IdleReleases, TimeSpan.FromSeconds(60), CancellationToken.None));

        var after = await service.StatsAsync(CancellationToken.None);
        Assert.True(after.IdleReleases > before.IdleReleases, $"releases {before.IdleReleases} -> {after.IdleReleases}");
        // A release already announced ends a later wait for it at once.
        Assert.True(await service.IdleReleaseAsync(before.IdleReleases, TimeSpan.Zero, CancellationToken.None));
    }

    [Fact]
    public async Task A_build_without_an_idle_release_waits_out_the_limit()
    {
        using var service = HttpService.Start("http", "serve", "defaults", share: 1, idleRelease: TimeSpan.FromSeconds(0.2));
        var before = await service.StatsAsync(CancellationToken.None);

        Assert.False(await service.IdleReleaseAsync(before.IdleReleases, TimeSpan.FromSeconds(0.5), CancellationToken.None));
    }
}
