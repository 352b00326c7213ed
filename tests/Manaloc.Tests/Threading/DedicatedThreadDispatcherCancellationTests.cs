using Manaloc.Threading;
using static Manaloc.Tests.Threading.DispatcherTestKit;

namespace Manaloc.Tests.Threading;

/// <summary>A cancelled PostAsync never queues its item and counts as a refused post.</summary>
public sealed class DedicatedThreadDispatcherCancellationTests
{
    [Fact]
    public void PostAsync_with_an_already_cancelled_token_does_not_queue_even_with_room()
    {
        bool ran = false;
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 16 });
        var post = d.PostAsync(() => ran = true, new CancellationToken(canceled: true));
        Assert.True(post.IsCanceled, "an already-cancelled PostAsync was accepted");
        Assert.ThrowsAny<OperationCanceledException>(() => post.GetAwaiter().GetResult());
        d.Dispose();
        Assert.False(ran);
        Assert.Equal(0, d.GetStatistics().Posted);
        Assert.Equal(1, d.GetStatistics().Rejected);
    }

    [Fact]
    public void PostAsync_cancelled_while_waiting_for_room_counts_as_rejected()
    {
        using var gate = new ManualResetEventSlim();
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 1 });
        BlockWorkers(d, gate);
        d.Post(() => { });
        using var cancel = new CancellationTokenSource();
        var waiting = d.PostAsync(() => { }, cancel.Token).AsTask();
        Assert.False(waiting.IsCompleted);
        cancel.Cancel();
        Assert.ThrowsAny<OperationCanceledException>(() => waiting.GetAwaiter().GetResult());
        Assert.Equal(1, d.GetStatistics().Rejected);
        gate.Set();
        d.Dispose();
        Assert.Equal(2, d.GetStatistics().Posted);
        Assert.Equal(2, d.GetStatistics().Executed);
        Assert.Equal(1, d.GetStatistics().Rejected);
    }
}
