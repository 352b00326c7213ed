using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>Misuse not covered elsewhere: a clear exception or a documented no-op, never a hang or a crash (docs/reliability.md).</summary>
public sealed class ThreadingMisuseTests
{
    [Fact]
    public void Posting_after_Dispose_is_refused_on_every_path_and_Dispose_twice_is_a_no_op()
    {
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1 });
        d.Dispose();
        d.Dispose();
        Assert.Throws<InvalidOperationException>(() => d.Post(() => { }));
        Assert.False(d.TryPost(() => { }));
        var post = d.PostAsync(() => { });
        Assert.True(post.IsFaulted);
        Assert.Throws<InvalidOperationException>(() => post.GetAwaiter().GetResult());
        Assert.Equal(3, d.GetStatistics().Rejected);
        Assert.Equal(0, d.GetStatistics().Posted);
    }

    [Fact]
    public void ScheduledValue_Dispose_twice_and_FlipNow_twice_are_no_ops()
    {
        var clock = new TimerCountingClock();
        var value = new ScheduledValue<int>(1, 2, TimeSpan.FromSeconds(1), clock);
        value.Dispose();
        value.Dispose();
        Assert.Equal(1, value.Value);
        value.FlipNow();
        value.FlipNow();
        Assert.Equal(2, value.Value);
        Assert.Equal(0, clock.ActiveTimers);
    }

    [Fact]
    public void LazyAsyncResult_End_before_completion_waits_and_End_twice_returns_the_same_result()
    {
        using var r = new LazyAsyncResult<int>(null, null);
        var setter = new Thread(() => { Thread.Sleep(10); r.SetResult(42); });
        setter.Start();
        Assert.Equal(42, r.End());
        Assert.Equal(42, r.End());
        setter.Join();
    }
}
