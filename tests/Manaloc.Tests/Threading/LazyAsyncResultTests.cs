using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class LazyAsyncResultTests
{
    [Fact]
    public void Callback_completion_never_creates_a_handle()
    {
        IAsyncResult? seen = null;
        int calls = 0;
        var r = new LazyAsyncResult<int>(ar => { seen = ar; calls++; }, "state");
        Assert.False(r.IsCompleted);

        r.SetResult(42);

        Assert.True(r.IsCompleted);
        Assert.False(r.CompletedSynchronously);
        Assert.Same(r, seen);
        Assert.Equal(1, calls);
        Assert.Equal("state", r.AsyncState);
        Assert.Equal(42, r.End());
        Assert.False(r.IsWaitHandleCreated);
        r.Dispose();
    }

    [Fact]
    public void A_handle_asked_for_before_completion_is_signalled_by_it()
    {
        using var r = new LazyAsyncResult<string>(null, null);
        var handle = r.AsyncWaitHandle;
        Assert.False(handle.WaitOne(0));
        Assert.Same(handle, r.AsyncWaitHandle);

        r.SetResult("done", completedSynchronously: true);

        Assert.True(handle.WaitOne(0));
        Assert.True(r.CompletedSynchronously);
        Assert.Equal("done", r.End());
    }

    [Fact]
    public void A_handle_asked_for_after_completion_is_already_signalled()
    {
        using var r = new LazyAsyncResult<int>(null, null);
        r.SetResult(1);
        Assert.True(r.AsyncWaitHandle.WaitOne(0));
    }

    [Fact]
    public void End_waits_for_a_completion_on_another_thread()
    {
        using var r = new LazyAsyncResult<int>(null, null);
        var errors = new List<Exception>();
        var completer = EventTestSupport.Start(() => { Thread.Sleep(20); r.SetResult(7); }, errors, "completer");
        Assert.Equal(7, r.End());
        completer.Join();
        Assert.Empty(errors);
    }

    [Fact]
    public void An_error_is_rethrown_by_End_and_completing_twice_throws()
    {
        using var r = new LazyAsyncResult<int>(null, null);
        r.SetException(new FormatException("bad"));
        Assert.Equal("bad", Assert.Throws<FormatException>(() => r.End()).Message);
        Assert.Throws<InvalidOperationException>(() => r.SetResult(1));
        Assert.Throws<InvalidOperationException>(() => r.SetException(new Exception()));
        Assert.Throws<ArgumentNullException>(() => new LazyAsyncResult<int>(null, null).SetException(null!));
    }

    [Fact]
    public void Dispose_releases_the_handle_and_later_requests_throw()
    {
        var r = new LazyAsyncResult<int>(null, null);
        var handle = r.AsyncWaitHandle;
        r.SetResult(3);
        r.Dispose();
        Assert.Throws<ObjectDisposedException>(() => handle.WaitOne(0));
        Assert.Throws<ObjectDisposedException>(() => r.AsyncWaitHandle);
        Assert.Equal(3, r.End()); // completed: no handle needed
        r.Dispose();
    }

    [Fact]
    public void A_handle_requested_while_completion_happens_is_always_signalled()
    {
        // Two threads ask for the handle while a third completes, over and over. A lost signal shows
        // as a wait that never ends (the watchdog fails); all askers must get the same handle.
        const int Rounds = 3000;
        long round = 0, mismatches = 0, unsignalled = 0;
        var errors = new List<Exception>();
        var results = new LazyAsyncResult<int>[Rounds];
        for (int i = 0; i < Rounds; i++) results[i] = new LazyAsyncResult<int>(null, null);
        using var go = new Barrier(3);
        WaitHandle?[,] seen = new WaitHandle?[Rounds, 2];

        Thread Asker(int who) => EventTestSupport.Start(() =>
        {
            for (int i = 0; i < Rounds; i++)
            {
                go.SignalAndWait();
                var h = results[i].AsyncWaitHandle;
                seen[i, who] = h;
                if (!h.WaitOne(EventTestSupport.Stall)) Interlocked.Increment(ref unsignalled);
                if (who == 0) Interlocked.Increment(ref round);
            }
        }, errors, $"asker {who}");

        var threads = new List<Thread> { Asker(0), Asker(1) };
        threads.Add(EventTestSupport.Start(() =>
        {
            for (int i = 0; i < Rounds; i++)
            {
                go.SignalAndWait();
                if ((i & 1) == 0) Thread.SpinWait(i % 64);
                results[i].SetResult(i);
            }
        }, errors, "completer"));
        EventTestSupport.JoinWithWatchdog(threads, () => Volatile.Read(ref round), () => $"round {round}");

        for (int i = 0; i < Rounds; i++)
        {
            if (!ReferenceEquals(seen[i, 0], seen[i, 1])) mismatches++;
            results[i].Dispose();
        }
        Assert.Empty(errors);
        Assert.Equal(0, unsignalled);
        Assert.Equal(0, mismatches);
        Assert.Equal(Rounds, round);
    }
}
