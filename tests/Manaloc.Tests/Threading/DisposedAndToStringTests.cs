using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>A disposed or stopped threading component says which one it is; ToString shows the name and the state.</summary>
public sealed class DisposedAndToStringTests
{
    [Fact]
    public void A_disposed_event_names_itself_in_the_exception()
    {
        var e = new EconomicResetEvent(false);
        e.Dispose();
        var error = Assert.Throws<ObjectDisposedException>(() => e.Set());
        Assert.Equal("EconomicResetEvent", error.ObjectName);
        Assert.Contains("This EconomicResetEvent has been disposed", error.Message, StringComparison.Ordinal);
        Assert.Equal("EconomicResetEvent", Assert.Throws<ObjectDisposedException>(() => e.Wait(0)).ObjectName);
    }

    [Fact]
    public void A_disposed_generic_result_is_named_as_written_not_with_its_arity()
    {
        var r = new LazyAsyncResult<int>(null, null);
        _ = r.AsyncWaitHandle;
        r.Dispose();
        var error = Assert.Throws<ObjectDisposedException>(() => r.AsyncWaitHandle);
        Assert.Equal("LazyAsyncResult", error.ObjectName);
        Assert.DoesNotContain("`", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_event_shows_its_state()
    {
        var e = new EconomicResetEvent(false);
        Assert.Equal("EconomicResetEvent (unset)", e.ToString());
        e.Set();
        Assert.Equal("EconomicResetEvent (set)", e.ToString());
        e.Dispose();
        Assert.Equal("EconomicResetEvent (disposed)", e.ToString());
    }

    [Fact]
    public void The_dispatcher_shows_its_name_and_state_and_counts_in_words()
    {
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "orders", ThreadCount = 1, Capacity = 8 });
        Assert.StartsWith("DedicatedThreadDispatcher 'orders': running, 1 thread, ", d.ToString(), StringComparison.Ordinal);
        d.Dispose();
        Assert.StartsWith("DedicatedThreadDispatcher 'orders': stopped, 1 thread, 0/8 queued", d.ToString(), StringComparison.Ordinal);
        var error = Assert.Throws<InvalidOperationException>(() => d.Post(() => { }));
        Assert.Contains("Dispatcher 'orders' is shut down", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_full_queue_of_one_says_one_item()
    {
        using var gate = new ManualResetEventSlim(false);
        using var started = new ManualResetEventSlim(false);
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "tiny", ThreadCount = 1, Capacity = 1, FullMode = FullQueueMode.FailFast });
        try
        {
            d.Post(() => { started.Set(); gate.Wait(); }); // the worker takes it and holds the only thread
            started.Wait();
            d.Post(() => { });                              // fills the one slot
            var error = Assert.Throws<InvalidOperationException>(() => d.Post(() => { }));
            Assert.Contains("has a full queue (1 item) ", error.Message, StringComparison.Ordinal);
        }
        finally
        {
            gate.Set();
            d.Dispose();
        }
    }

    [Theory]
    [InlineData(0, "0 items")]
    [InlineData(1, "1 item")]
    [InlineData(2, "2 items")]
    public void Counts_take_the_singular_for_one(long count, string expected)
        => Assert.Equal(expected, Plural.Of(count, "item"));
}
