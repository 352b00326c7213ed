using Manaloc.Buffers;
using Manaloc.Tests.Threading;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Buffers;

/// <summary>
/// The buffer manager releases idle buffers (shared tiers, thread stacks, hot buffers) once a size class
/// has been idle for <see cref="BufferManagerOptions.ReleaseIdleAfter"/> on its clock, and its statistics
/// count retained and rented bytes exactly. Manual clock, gen-2 trimming off: no waiting, no GC involved.
/// </summary>
public sealed class BufferManagerIdleReleaseTests
{
    private static readonly TimeSpan Period = TimeSpan.FromSeconds(1);

    private static BufferManager NewManager(TimeProvider clock, string name = "idle-buffers") => new(new BufferManagerOptions
    {
        Name = name, TrimAfterGen2 = false, ReleaseIdleAfter = Period, TimeProvider = clock, MaxRetainedBytesPerClass = 64L << 20,
    });

    /// <summary>Rents <paramref name="count"/> buffers of each size at once, then returns them all.</summary>
    private static void Burst(BufferManager manager, int count, params int[] sizes)
    {
        var held = sizes.SelectMany(size => Enumerable.Range(0, count).Select(_ => manager.Rent(size))).ToArray();
        foreach (var buffer in held) manager.Return(buffer);
    }

    [Fact]
    public void A_burst_then_idle_is_released_to_a_tenth_within_one_and_a_half_periods_without_a_GC()
    {
        var clock = new FakeTimeProvider();
        using var manager = NewManager(clock);
        Burst(manager, 40, 4096, 65536, 1 << 20);
        long peak = manager.GetStatistics().RetainedBytes;
        Assert.Equal(40L * (4096 + 65536 + (1 << 20)), peak);

        clock.Advance(Period); // checks at 0.5 and 1 period: the burst's rents are the demand
        Assert.Equal(peak, manager.GetStatistics().RetainedBytes);
        clock.Advance(Period / 2); // the check at 1.5 sees a period without a rent: every class goes, this thread's hot buffers and stacks included

        var stats = manager.GetStatistics();
        Assert.True(stats.RetainedBytes <= peak / 10, $"retained {stats.RetainedBytes} B of a peak of {peak} B");
        Assert.Equal(0, stats.RetainedBytes);
        Assert.Equal(0, stats.Retained);
        Assert.Equal(120, stats.Trimmed);
        Assert.Equal(0, stats.RentedBytes);
    }

    [Fact]
    public void A_busy_manager_keeps_its_buffers()
    {
        var clock = new FakeTimeProvider();
        using var manager = NewManager(clock);
        Burst(manager, 10, 4096);
        long retained = manager.GetStatistics().RetainedBytes;
        for (int period = 0; period < 5; period++)
        {
            Burst(manager, 10, 4096);
            clock.Advance(Period);
            Assert.Equal(retained, manager.GetStatistics().RetainedBytes);
        }
        Assert.Equal(0, manager.GetStatistics().Trimmed);
        Assert.Equal(10, manager.GetStatistics().Creations);
    }

    [Fact]
    public void Buffers_cached_by_a_finished_thread_and_by_a_live_quiet_thread_are_released()
    {
        var clock = new FakeTimeProvider();
        using var manager = NewManager(clock);
        var finished = new Thread(() => Burst(manager, 5, 4096, 16384));
        finished.Start();
        Assert.True(finished.Join(TimeSpan.FromSeconds(30)), "worker hung");
        using var filled = new ManualResetEventSlim();
        using var resume = new ManualResetEventSlim();
        Exception? failure = null;
        var quiet = new Thread(() =>
        {
            try
            {
                Burst(manager, 5, 4096, 16384); // a hot buffer and a stack per class on this thread
                filled.Set();
                resume.Wait();
                Burst(manager, 20, 4096); // after the release: rents work, nothing is handed out twice
                var a = manager.Rent(4096);
                var b = manager.Rent(4096);
                Assert.NotSame(a, b);
                manager.Return(a);
                manager.Return(b);
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        quiet.Start();
        Assert.True(filled.Wait(TimeSpan.FromSeconds(30)), "worker did not fill its cache");
        Assert.True(manager.GetStatistics().Retained >= 10);

        clock.Advance(Period);
        clock.Advance(Period);
        Assert.Equal(0, manager.GetStatistics().Retained);
        Assert.Equal(0, manager.GetStatistics().RetainedBytes);

        resume.Set();
        Assert.True(quiet.Join(TimeSpan.FromSeconds(30)), "worker hung");
        Assert.Null(failure);
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }

    [Fact]
    public void Statistics_count_retained_and_rented_bytes_exactly()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "bytes", TrimAfterGen2 = false, ReleaseIdleAfter = Timeout.InfiniteTimeSpan });
        var a = manager.Rent(100); // 128
        var b = manager.Rent(4000); // 4,096
        var c = manager.Rent(4096); // 4,096
        var unpooled = manager.Rent(manager.MaxBufferSize + 1); // a plain allocation: not counted
        var stats = manager.GetStatistics();
        Assert.Equal(128 + 4096 + 4096, stats.RentedBytes);
        Assert.Equal(0, stats.RetainedBytes);

        manager.Return(b); // the class stack (the first return sets up the thread's hot tier)
        manager.Return(a);
        manager.Return(unpooled);
        stats = manager.GetStatistics();
        Assert.Equal(4096, stats.RentedBytes);
        Assert.Equal(128 + 4096, stats.RetainedBytes);
        Assert.Equal(4096, manager.GetStatistics(4096).RentedBytes);
        Assert.Equal(4096, manager.GetStatistics(4096).RetainedBytes);
        Assert.Equal(128, manager.GetStatistics(128).RetainedBytes);

        manager.Return(c);
        var again = manager.Rent(4096); // from the hot buffer or the stack
        stats = manager.GetStatistics();
        Assert.Equal(4096, stats.RentedBytes);
        Assert.Equal(128 + 4096, stats.RetainedBytes);
        manager.Return(again);
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
        Assert.Equal(128 + 2 * 4096, manager.GetStatistics().RetainedBytes);
        Assert.Equal(3, manager.GetStatistics().Retained);
    }

    [Fact]
    public void Rented_bytes_of_a_finished_thread_are_kept_after_its_cache_is_forgotten()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "bytes-exited", TrimAfterGen2 = false, ReleaseIdleAfter = Timeout.InfiniteTimeSpan });
        byte[]? kept = null;
        var worker = new Thread(() =>
        {
            manager.Return(manager.Rent(1024)); // sets up this thread's cache
            kept = manager.Rent(1024); // still rented when the thread exits
        });
        worker.Start();
        Assert.True(worker.Join(TimeSpan.FromSeconds(30)), "worker hung");
        manager.Trim(); // forgets the exited thread's cache, folding its counters into the manager's
        Assert.Equal(1024, manager.GetStatistics().RentedBytes);
        manager.Return(kept!);
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }

    [Fact]
    public void Dispose_stops_the_timer()
    {
        var clock = new TimerCountingClock();
        var manager = NewManager(clock);
        Assert.Equal(1, clock.ActiveTimers); // one timer for every size class, not one per class
        manager.Dispose();
        Assert.Equal(0, clock.ActiveTimers);
    }

    public static TheoryData<TimeSpan> BadPeriods() => new() { TimeSpan.Zero, TimeSpan.FromSeconds(-1), TimeSpan.FromDays(50) };

    [Theory]
    [MemberData(nameof(BadPeriods))]
    public void A_bad_period_is_refused_naming_the_option(TimeSpan period)
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => new BufferManager(new BufferManagerOptions { ReleaseIdleAfter = period }));
        Assert.Equal(nameof(BufferManagerOptions.ReleaseIdleAfter), e.ParamName);
    }

    [Fact]
    public void A_null_clock_is_refused_naming_the_option()
    {
        var e = Assert.ThrowsAny<ArgumentException>(() => new BufferManager(new BufferManagerOptions { TimeProvider = null! }));
        Assert.Equal(nameof(BufferManagerOptions.TimeProvider), e.ParamName);
    }
}
