using Microsoft.Extensions.Time.Testing;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary>What the buffer manager adds to the ArrayPool contract.</summary>
public sealed class BufferManagerTests
{
    [Fact]
    public void Sizes_round_up_to_powers_of_two_and_large_rents_are_plain_allocations()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "sizes", MaxBufferSize = 1 << 16 });
        Assert.Equal(16, manager.Rent(1).Length);
        Assert.Equal(32, manager.Rent(17).Length);
        Assert.Equal(1 << 16, manager.Rent(40_000).Length);
        var big = manager.Rent((1 << 16) + 1);
        Assert.Equal((1 << 16) + 1, big.Length);
        manager.Return(big); // not pooled: ignored
        manager.Return(new byte[1 << 17]); // power of two above the largest class: ignored
        Assert.Equal(0, manager.GetStatistics().Retained);
    }

    [Fact]
    public void A_double_return_on_one_thread_never_hands_the_buffer_to_two_renters()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "double" });
        var a = manager.Rent(4096);
        manager.Return(a);
        manager.Return(a);
        var x = manager.Rent(4096);
        var y = manager.Rent(4096);
        Assert.NotSame(x, y);
        Assert.Equal(1, manager.GetStatistics(4096).Drops);
    }

    [Fact]
    public void A_double_return_into_the_hot_slot_is_refused()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "double-hot" });
        var b = manager.Rent(512);
        manager.Return(b); // first return on this thread: goes to the class stack and sets up the thread's hot tier
        Assert.Same(b, manager.Rent(512));
        manager.Return(b); // stack empty: becomes the hot buffer
        manager.Return(b); // already the hot buffer: refused
        var x = manager.Rent(512);
        var y = manager.Rent(512);
        Assert.Same(b, x);
        Assert.NotSame(x, y);
        Assert.Equal(1, manager.GetStatistics(512).Drops);
    }

    [Fact]
    public void A_double_return_after_a_refill_from_the_shared_tier_is_refused()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "refill-hot", BuffersPerThread = 4, BatchSize = 4 });
        // Another thread leaves buffers in the shared tier (its stack spills when full, then it exits).
        var filler = new Thread(() =>
        {
            var many = Enumerable.Range(0, 12).Select(_ => manager.Rent(256)).ToArray();
            foreach (var b in many) manager.Return(b);
        });
        filler.Start();
        filler.Join();
        manager.Return(manager.Rent(64)); // this thread now has a thread cache, but no 256-byte stack yet
        var a = manager.Rent(256); // refills this thread's 256-byte stack from the shared tier
        manager.Return(a); // the stack is not empty: goes to the stack, not the hot slot
        manager.Return(a); // found on the stack: refused
        var rented = Enumerable.Range(0, 8).Select(_ => manager.Rent(256)).ToArray();
        Assert.Equal(rented.Length, rented.Distinct().Count());
        Assert.Equal(1, manager.GetStatistics(256).Drops);
    }

    [Fact]
    public void Idle_hot_buffers_are_trimmed_after_gen2_collections()
    {
        var clock = new FakeTimeProvider();
        using var manager = new BufferManager(new BufferManagerOptions { Name = "gen2-hot", TimeProvider = clock, ReleaseIdleAfter = Timeout.InfiniteTimeSpan });
        var sizes = new[] { 64, 1024, 8192 };
        foreach (int size in sizes)
        {
            var first = manager.Rent(size);
            manager.Return(first);
            manager.Return(manager.Rent(size)); // now the hot buffer of its class
        }
        Assert.Equal(3, manager.GetStatistics().Retained);
        for (int i = 0; i < 4 && manager.GetStatistics().Trimmed < 3; i++)
        {
            clock.Advance(TimeSpan.FromSeconds(1)); // a pass needs a second since the last one
            CollectGen2();
        }
        var stats = manager.GetStatistics();
        Assert.True(stats.Trimmed >= 3, $"hot buffers trimmed ({stats.Trimmed})");
        Assert.Equal(0, stats.Retained);
    }

    [Fact]
    public void Gen2_collections_within_a_second_of_the_last_pass_trim_nothing()
    {
        // A process churning the large-object heap collects gen 2 many times a second; buffers unused between two of
        // those collections are not idle, and must stay (the clock does not move here, so only the first collection passes).
        var clock = new FakeTimeProvider();
        using var manager = new BufferManager(new BufferManagerOptions { Name = "gen2-burst", TimeProvider = clock, ReleaseIdleAfter = Timeout.InfiniteTimeSpan });
        CollectGen2(); // the first pass (nothing to trim yet); every later collection comes within the second
        var held = Enumerable.Range(0, 3).Select(_ => manager.Rent(1 << 20)).ToArray(); // one hot, two on the thread's stack
        foreach (var array in held) manager.Return(array);
        manager.Return(manager.Rent(4096));
        for (int i = 0; i < 4; i++) CollectGen2();
        var stats = manager.GetStatistics();
        Assert.Equal(0, stats.Trimmed);
        Assert.Equal(4, stats.Retained);
        Assert.Contains(manager.Rent(1 << 20), held); // still pooled, not created again
    }

    private static void CollectGen2()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        GC.WaitForPendingFinalizers(); // the gen-2 callbacks run on the finalizer thread
    }

    [Fact]
    public void Debug_mode_detects_double_and_foreign_returns()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "debug-buffers", DebugMode = true });
        var a = manager.Rent(4096);
        manager.Return(a);
        var other = manager.Rent(4096); // a again; take it out and give it back on another thread later
        Assert.Same(a, other);
        manager.Return(other);
        Assert.Throws<InvalidOperationException>(() => manager.Return(a));
        Assert.Throws<InvalidOperationException>(() => manager.Return(new byte[4096]));
    }

    [Fact]
    public void RentedBuffer_returns_itself_once()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "rented" });
        byte[] array;
        using (var buffer = manager.RentBuffer(1000))
        {
            Assert.Equal(1000, buffer.Span.Length);
            Assert.Equal(1000, buffer.Memory.Length);
            array = buffer.Array;
        }
        Assert.Equal(1, manager.GetStatistics().Retained);
        Assert.Same(array, manager.Rent(1000));
        var empty = manager.RentBuffer(0);
        empty.Dispose();
        empty.Dispose();
    }

    [Fact]
    public void RentedBuffer_copies_return_the_buffer_once_and_all_see_it_disposed()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "rented-copies" });
        var original = manager.RentBuffer(100);
        var copy = original; // a copy by mistake: both end the same lease
        byte[] array = original.Array;
        copy.Dispose();
        Assert.True(original.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => { _ = original.Span.Length; });
        Assert.Throws<ObjectDisposedException>(() => original.Array);
        original.Dispose(); // does nothing: the buffer went back once
        Assert.Equal(0, manager.GetStatistics().Drops); // no refused double return
        var x = manager.Rent(100);
        var y = manager.Rent(100);
        Assert.Same(array, x);
        Assert.NotSame(x, y);

        // A stale copy does not end a later lease (leases are pooled and reused).
        var next = manager.RentBuffer(100);
        original.Dispose();
        Assert.False(next.IsDisposed);
        next.Dispose();
        Assert.True(default(RentedBuffer).IsDisposed);
        default(RentedBuffer).Dispose();
    }

    [Fact]
    public void RentBuffer_allocates_nothing_after_warm_up()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "rented-alloc" });
        for (int i = 0; i < 1000; i++) manager.RentBuffer(4096).Dispose();
        Assert.Equal(0, Allocations.OnThisThread(() => { for (int i = 0; i < 10_000; i++) manager.RentBuffer(4096).Dispose(); }));
    }

    [Fact]
    public void Steady_state_rent_and_return_allocate_nothing()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "alloc" });
        for (int i = 0; i < 1000; i++) manager.Return(manager.Rent(4096));
        Assert.Equal(0, Allocations.OnThisThread(() => { for (int i = 0; i < 10_000; i++) manager.Return(manager.Rent(4096)); }));
    }

    [Fact]
    public void Concurrent_renters_never_share_a_buffer()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "stress-buffers", BuffersPerThread = 4, BatchSize = 2 });
        long rents = 0;
        Pooling.Watchdog.Run(4, (index, progress) =>
        {
            var held = new Stack<byte[]>();
            var random = new Random(index);
            byte mark = (byte)(index + 1);
            for (int i = 0; i < 40_000; i++)
            {
                if (held.Count < 8 && (held.Count == 0 || random.Next(2) == 0))
                {
                    var b = manager.Rent(1 << random.Next(4, 13));
                    Interlocked.Increment(ref rents);
                    b.AsSpan().Fill(mark);
                    held.Push(b);
                }
                else
                {
                    var b = held.Pop();
                    int at = b.AsSpan().IndexOfAnyExcept(mark);
                    Assert.True(at < 0, $"another renter wrote into a buffer this thread holds: thread {index}, op {i}, byte[{b.Length}], byte {at} is {(at < 0 ? 0 : b[at])}");
                    manager.Return(b);
                }
                if ((i & 1023) == 0) progress();
            }
            while (held.Count > 0) manager.Return(held.Pop());
        });
        Assert.Equal(rents, manager.GetStatistics().Rents); // exact once every thread has finished, exited ones included
    }

    [Fact]
    public void Trimming_while_threads_rent_and_return_never_hands_a_buffer_to_two_renters()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "trim-race-buffers", BuffersPerThread = 4, BatchSize = 2 });
        int stop = 0, started = 0; // workers start once the trimmer runs, so the two overlap
        Pooling.Watchdog.Run(3, (index, progress) =>
        {
            if (index == 2)
            {
                while (Volatile.Read(ref stop) == 0)
                {
                    Volatile.Write(ref started, 1);
                    manager.Trim(); // takes hot buffers away with Interlocked.Exchange while their owners use them (no progress() here)
                    Thread.Yield();
                }
                return;
            }
            var held = new Stack<byte[]>();
            var random = new Random(index);
            byte mark = (byte)(index + 1);
            while (Volatile.Read(ref started) == 0) Thread.Yield();
            for (int i = 0; i < 200_000; i++)
            {
                if (held.Count < 4 && (held.Count == 0 || random.Next(2) == 0))
                {
                    var b = manager.Rent(random.Next(2) == 0 ? 64 : 4096);
                    b.AsSpan().Fill(mark);
                    held.Push(b);
                }
                else
                {
                    var b = held.Pop();
                    Assert.True(b.AsSpan().IndexOfAnyExcept(mark) < 0, "another renter wrote into a buffer this thread holds");
                    manager.Return(b);
                }
                if ((i & 1023) == 0) progress();
            }
            while (held.Count > 0) manager.Return(held.Pop());
            if (index == 0) Volatile.Write(ref stop, 1);
        });
        Assert.True(manager.GetStatistics().Rents > 0);
    }

    [Fact]
    public void Options_out_of_range_are_rejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new BufferManager(new BufferManagerOptions { MaxBufferSize = 1000 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new BufferManager(new BufferManagerOptions { BuffersPerThread = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new BufferManager(new BufferManagerOptions { BatchSize = 9 }));
    }

    [Fact]
    public void Rent_after_Dispose_throws_and_Return_is_ignored()
    {
        var manager = new BufferManager(new BufferManagerOptions { Name = "disposed" });
        var a = manager.Rent(64);
        manager.Dispose();
        manager.Return(a);
        Assert.Throws<ObjectDisposedException>(() => manager.Rent(64));
        Assert.Equal(0, manager.GetStatistics().Retained);
    }

    [Fact]
    public void Managers_used_alternately_on_one_thread_each_keep_and_reuse_their_own_buffers()
    {
        using var first = new BufferManager(new BufferManagerOptions { Name = "alternate-1" });
        using var second = new BufferManager(new BufferManagerOptions { Name = "alternate-2" });
        byte[]? firstSeen = null, secondSeen = null;
        for (int i = 0; i < 100; i++)
        {
            var a = first.Rent(4096);
            var b = second.Rent(4096);
            Assert.NotSame(a, b);
            Assert.Same(firstSeen ?? a, a); // each manager hands its one buffer back every time
            Assert.Same(secondSeen ?? b, b);
            firstSeen = a;
            secondSeen = b;
            first.Return(a);
            second.Return(b);
        }
        Assert.Equal(100, first.GetStatistics().Rents);
        Assert.Equal(1, first.GetStatistics().Creations);
        Assert.Equal(100, second.GetStatistics().Rents);
        Assert.Equal(1, second.GetStatistics().Creations);
    }

    [Fact]
    public void Debug_mode_still_checks_when_the_thread_used_another_manager_last()
    {
        using var plain = new BufferManager(new BufferManagerOptions { Name = "plain-before-debug" });
        using var debug = new BufferManager(new BufferManagerOptions { Name = "debug-after-plain", DebugMode = true });
        var p = plain.Rent(256);
        plain.Return(p); // the plain manager is now this thread's last one
        var d = debug.Rent(256);
        debug.Return(d);
        plain.Return(plain.Rent(256));
        Assert.Throws<InvalidOperationException>(() => debug.Return(d));
        Assert.Throws<InvalidOperationException>(() => debug.Return(new byte[256]));
    }
}
