using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.InteropServices;
using Manaloc.Buffers;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Buffers;

/// <summary>The MemoryPool contract of <see cref="BufferMemoryPool"/>, its pooled owners, diagnostic and pinned modes, and a Pipe over it.</summary>
public sealed class BufferMemoryPoolTests
{
    /// <summary>A manager in debug mode: a second return of any array throws, so "returned once" is checked, not hoped.</summary>
    private static BufferManager Strict(string name) => new(new BufferManagerOptions { Name = name, DebugMode = true });

    [Fact]
    public void Rent_without_a_size_returns_the_block_size_and_sizes_round_up()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "sizes", BlockSize = 8192 });
        using (var block = pool.Rent()) Assert.Equal(8192, block.Memory.Length);
        using (var block = pool.Rent(-1)) Assert.Equal(8192, block.Memory.Length);
        using (var small = pool.Rent(1)) Assert.Equal(16, small.Memory.Length);
        using (var odd = pool.Rent(5000)) Assert.Equal(8192, odd.Memory.Length);
        using (var empty = pool.Rent(0)) Assert.Equal(0, empty.Memory.Length);
        using (var largest = pool.Rent(pool.MaxBufferSize)) Assert.Equal(pool.MaxBufferSize, largest.Memory.Length);
        Assert.Equal(64 << 20, pool.MaxBufferSize);
        Assert.Equal(0, pool.GetStatistics().Outstanding);
    }

    [Theory]
    [InlineData(-2)]
    [InlineData(int.MinValue)]
    [InlineData((1 << 20) + 1)]
    [InlineData(int.MaxValue)]
    public void Rent_outside_minus_one_to_MaxBufferSize_throws_naming_the_pool(int size)
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "bounded", MaxBufferSize = 1 << 20 });
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent(size));
        Assert.Equal("minimumBufferSize", e.ParamName);
        Assert.Contains("'bounded'", e.Message);
        Assert.Equal(0, pool.GetStatistics().Rents);
    }

    [Fact]
    public void Bad_options_are_refused_with_the_option_named()
    {
        Assert.Equal("BlockSize", Assert.Throws<ArgumentOutOfRangeException>(() => new BufferMemoryPool(new() { BlockSize = 1000 })).ParamName);
        Assert.Equal("BlockSize", Assert.Throws<ArgumentOutOfRangeException>(() => new BufferMemoryPool(new() { BlockSize = 8 })).ParamName);
        Assert.Equal("BlockSize", Assert.Throws<ArgumentOutOfRangeException>(() => new BufferMemoryPool(new() { BlockSize = 1 << 21, MaxBufferSize = 1 << 20 })).ParamName);
        Assert.Equal("MaxBufferSize", Assert.Throws<ArgumentOutOfRangeException>(() => new BufferMemoryPool(new() { MaxBufferSize = 3 << 20 })).ParamName);
        Assert.Equal("MaxBufferSize", Assert.Throws<ArgumentOutOfRangeException>(() => new BufferMemoryPool(new() { MaxBufferSize = -1 })).ParamName);
        Assert.Equal("Name", Assert.Throws<ArgumentException>(() => new BufferMemoryPool(new() { Name = "" })).ParamName);
        using var small = new BufferManager(new BufferManagerOptions { Name = "small", MaxBufferSize = 1 << 16 });
        Assert.Equal("MaxBufferSize", Assert.Throws<ArgumentOutOfRangeException>(() => new BufferMemoryPool(new() { Manager = small, MaxBufferSize = 1 << 17 })).ParamName);
        Assert.Equal("Pinned", Assert.Throws<ArgumentException>(() => new BufferMemoryPool(new() { Manager = small, Pinned = true })).ParamName);
        using var fits = new BufferMemoryPool(new() { Manager = small });
        Assert.Equal(1 << 16, fits.MaxBufferSize); // 0: the manager's maximum
    }

    [Fact]
    public void Rent_after_the_pools_Dispose_throws_ObjectDisposedException_naming_it_and_late_returns_are_fine()
    {
        var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "closing" });
        var outstanding = pool.Rent();
        pool.Dispose();
        pool.Dispose(); // idempotent
        var e = Assert.Throws<ObjectDisposedException>(() => pool.Rent());
        Assert.Contains("'closing'", e.Message);
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(100));
        outstanding.Dispose(); // a late return after the pool's Dispose: dropped, no exception
        Assert.Contains("disposed", pool.ToString());
    }

    [Fact]
    public void Disposing_the_pool_leaves_a_given_manager_working()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "given" });
        var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Manager = manager });
        pool.Rent().Dispose();
        pool.Dispose();
        Assert.Same(manager, pool.Manager);
        manager.Return(manager.Rent(100)); // not disposed with the pool
    }

    [Fact]
    public void A_double_Dispose_returns_the_owner_once()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "double-dispose" });
        var owner = pool.Rent();
        owner.Dispose();
        owner.Dispose();
        var stats = pool.GetStatistics();
        Assert.Equal((1L, 1L, 0L, 0L), (stats.Rents, stats.Returns, stats.Outstanding, stats.RentedBytes));
        // Stored twice, the owner (and its array) would now go to two renters at once.
        AssertDistinctArrays(pool, 4);
    }

    /// <summary>Rents <paramref name="count"/> blocks at once and checks that no two share an array (an owner pooled twice would).</summary>
    private static void AssertDistinctArrays(BufferMemoryPool pool, int count)
    {
        var owners = Enumerable.Range(0, count).Select(_ => pool.Rent()).ToList();
        var arrays = owners.Select(o => MemoryMarshal.TryGetArray<byte>(o.Memory, out var segment) ? segment.Array! : throw new InvalidOperationException("no array")).ToList();
        Assert.Equal(count, arrays.Distinct(ReferenceEqualityComparer.Instance).Count());
        owners.ForEach(o => o.Dispose());
    }

    [Fact]
    public void Memory_of_a_disposed_owner_throws_until_the_owner_is_reused()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "stale" });
        var owner = pool.Rent();
        owner.Dispose();
        Assert.Throws<ObjectDisposedException>(() => owner.Memory);
    }

    [Fact]
    public void Racing_Disposes_of_one_owner_return_it_exactly_once()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "racing-dispose" });
        const int Rounds = 200, Threads = 4;
        for (int round = 0; round < Rounds; round++)
        {
            var owner = pool.Rent();
            using var barrier = new Barrier(Threads);
            var threads = Enumerable.Range(0, Threads).Select(_ => new Thread(() =>
            {
                barrier.SignalAndWait();
                owner.Dispose();
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
        }
        var stats = pool.GetStatistics();
        Assert.Equal((long)Rounds, stats.Returns);
        Assert.Equal(0, stats.Outstanding);
        // An owner given back twice by a race would be handed to two of these renters (the tier's shared part and
        // the four threads' stacks all hold owners now: rent more than any one stack keeps).
        AssertDistinctArrays(pool, 100);
    }

    [Fact]
    public void Owners_rented_on_one_thread_and_disposed_on_another_are_never_held_twice()
    {
        // The pipe's pattern: every owner crosses threads, through the disposing thread's stack and the shared tier back
        // to the renting thread. Each outstanding array is registered on rent and must not be registered already: an
        // owner stored twice by the tier would come back while its first rent is still out.
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "cross-thread" });
        var outstanding = new System.Collections.Concurrent.ConcurrentDictionary<byte[], bool>(ReferenceEqualityComparer.Instance);
        var queue = new System.Collections.Concurrent.BlockingCollection<IMemoryOwner<byte>>(boundedCapacity: 300);
        const int Count = 50_000;
        int duplicates = 0, corrupted = 0;
        var consumer = new Thread(() =>
        {
            foreach (var owner in queue.GetConsumingEnumerable())
            {
                Assert.True(MemoryMarshal.TryGetArray<byte>(owner.Memory, out var segment));
                if (segment.Array![1] != (byte)(segment.Array[0] + 1)) Interlocked.Increment(ref corrupted);
                outstanding.TryRemove(segment.Array, out _); // before the Dispose: after it the array may be rented again at once
                owner.Dispose();
            }
        });
        consumer.Start();
        for (int i = 0; i < Count; i++)
        {
            var owner = pool.Rent(i % 3 == 0 ? 65536 : 4096);
            Assert.True(MemoryMarshal.TryGetArray<byte>(owner.Memory, out var segment));
            if (!outstanding.TryAdd(segment.Array!, true)) duplicates++;
            segment.Array![0] = (byte)i;
            segment.Array[1] = (byte)(i + 1);
            queue.Add(owner);
        }
        queue.CompleteAdding();
        consumer.Join();
        Assert.Equal(0, duplicates);
        Assert.Equal(0, corrupted);
        var stats = pool.GetStatistics();
        Assert.Equal(((long)Count, (long)Count, 0L, 0L), (stats.Rents, stats.Returns, stats.Outstanding, stats.RentedBytes));
    }

    [Fact]
    public void Idle_owners_are_released_with_their_arrays_on_the_managers_clock()
    {
        var clock = new FakeTimeProvider();
        var period = TimeSpan.FromSeconds(1);
        using var manager = new BufferManager(new BufferManagerOptions { Name = "idle-owners", TrimAfterGen2 = false, ReleaseIdleAfter = period, TimeProvider = clock });
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "idle-owners", Manager = manager });
        var owners = Enumerable.Range(0, 20).Select(_ => pool.Rent()).ToList();
        owners.ForEach(o => o.Dispose());
        Assert.Equal(20 * 4096, pool.GetStatistics().RetainedBytes); // the owners keep their arrays; the manager holds none

        clock.Advance(period * 2); // a period with no rent: every idle owner goes, this thread's stack included

        var stats = pool.GetStatistics();
        Assert.Equal(0, stats.RetainedBytes);
        Assert.Equal((20L, 20L, 0L), (stats.Rents, stats.Returns, stats.Outstanding));
        // The released owners' arrays went back to the manager: it sees none of them rented any more.
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
        using var again = pool.Rent(); // a new owner, with a new array
        Assert.Equal(4096, again.Memory.Length);
    }

    [Fact]
    public void The_pools_Dispose_drops_its_idle_owners()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "dispose-owners" });
        var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Manager = manager });
        var late = pool.Rent(10_000);
        pool.Rent().Dispose();
        Assert.True(pool.GetStatistics().RetainedBytes >= 4096);
        pool.Dispose();
        late.Dispose(); // after the pool's Dispose: dropped with its array
        var stats = pool.GetStatistics();
        Assert.Equal(0, stats.RetainedBytes - manager.GetStatistics().RetainedBytes); // no owner of the pool holds an array any more
        Assert.Equal((2L, 2L, 0L), (stats.Rents, stats.Returns, stats.Outstanding));
        Assert.Equal(0, manager.GetStatistics().RentedBytes); // every owner's array went back to the manager, once
        late.Dispose(); // a stale Dispose of a dropped owner returns nothing again
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
        Assert.Throws<ObjectDisposedException>(() => late.Memory);
    }

    [Fact]
    public void Stale_Disposes_racing_the_pools_drop_never_return_an_array_twice()
    {
        // The drop moves an idle owner to "dropped" by compare-exchange; a stale Dispose moves only a rented one. If either
        // overwrote the other's state, an array would reach the (debug-mode) manager twice and throw, or stay out.
        for (int round = 0; round < 200; round++)
        {
            using var manager = new BufferManager(new BufferManagerOptions { Name = "race", DebugMode = true, TrimAfterGen2 = false, ReleaseIdleAfter = Timeout.InfiniteTimeSpan });
            var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "race", Manager = manager });
            var owner = pool.Rent();
            owner.Dispose();
            using var start = new Barrier(2);
            Exception? failure = null;
            var stale = new Thread(() =>
            {
                start.SignalAndWait();
                try
                {
                    for (int i = 0; i < 100; i++) owner.Dispose();
                }
                catch (Exception e)
                {
                    failure = e;
                }
            });
            stale.Start();
            start.SignalAndWait();
            pool.Dispose();
            stale.Join();
            Assert.Null(failure);
            Assert.Equal(0, manager.GetStatistics().RentedBytes);
        }
    }

    [Fact]
    public void Owners_dropped_over_the_cap_give_their_arrays_back_to_the_manager_once()
    {
        // A small class cap: returning 40 owners at once drops those the tier cannot keep.
        using var manager = new BufferManager(new BufferManagerOptions { Name = "cap", MaxRetainedBytesPerClass = 8 * 4096, TrimAfterGen2 = false, ReleaseIdleAfter = Timeout.InfiniteTimeSpan, DebugMode = true });
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "cap", Manager = manager });
        var owners = Enumerable.Range(0, 40).Select(_ => pool.Rent()).ToList();
        Assert.Equal(40 * 4096, manager.GetStatistics().RentedBytes);
        owners.ForEach(o => o.Dispose());
        owners.ForEach(o => o.Dispose()); // stale repeats: no array goes back twice (debug mode would throw)
        var managerStatistics = manager.GetStatistics();
        // The pool's retained bytes are its idle owners' arrays plus what its manager retains.
        long idleOwners = (pool.GetStatistics().RetainedBytes - managerStatistics.RetainedBytes) / 4096;
        Assert.InRange(idleOwners, 1, 39); // the cap dropped some
        Assert.Equal(40 - idleOwners, managerStatistics.Drops + managerStatistics.Retained); // every dropped owner's array reached the manager, once
        Assert.Equal(idleOwners * 4096, managerStatistics.RentedBytes); // and the manager counts only the idle owners' arrays as out
    }

    [Fact]
    public void Rent_of_zero_bytes_holds_nothing_and_is_not_counted()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "empty" });
        var empty = pool.Rent(0);
        Assert.True(empty.Memory.IsEmpty);
        empty.Dispose();
        empty.Dispose();
        Assert.Equal(0, pool.GetStatistics().Rents);
    }

    [Fact]
    public void A_rent_and_Dispose_allocate_nothing_after_warm_up()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "zero-alloc" });
        void Body()
        {
            for (int i = 0; i < 1000; i++)
            {
                var owner = pool.Rent();
                owner.Memory.Span[0] = 1;
                owner.Dispose();
                var big = pool.Rent(100_000);
                big.Dispose();
            }
        }
        Body();
        Assert.Equal(0, Allocations.OnThisThread(Body));
    }

    [Fact]
    public void Statistics_count_rents_returns_and_bytes()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "stats" });
        var a = pool.Rent();
        var b = pool.Rent(10_000);
        var stats = pool.GetStatistics();
        Assert.Equal((2L, 0L, 2L, 4096L + 16384L), (stats.Rents, stats.Returns, stats.Outstanding, stats.RentedBytes));
        a.Dispose();
        b.Dispose();
        stats = pool.GetStatistics();
        Assert.Equal((2L, 2L, 0L, 0L), (stats.Rents, stats.Returns, stats.Outstanding, stats.RentedBytes));
        Assert.True(stats.RetainedBytes >= 4096 + 16384, $"the two arrays are kept for reuse: {stats.RetainedBytes} bytes retained");
    }

    [Fact]
    public void Diagnostic_mode_catches_a_use_of_memory_after_Dispose_and_names_the_pool()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "diagnostic", Diagnostics = true });
        var owner = pool.Rent();
        var memory = owner.Memory; // taken before Dispose: still checked, through the owner's MemoryManager
        memory.Span[0] = 42;
        owner.Dispose();
        var e = Assert.Throws<ObjectDisposedException>(() => owner.Memory);
        Assert.Contains("'diagnostic'", e.Message);
        Assert.Contains("'diagnostic'", Assert.Throws<ObjectDisposedException>(() => { _ = memory.Span; }).Message);
        Assert.Throws<ObjectDisposedException>(() => memory.Pin());
    }

    [Fact]
    public void Diagnostic_mode_a_stale_owners_Dispose_never_returns_the_next_renters_array()
    {
        using var manager = Strict("diagnostic-stale");
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Manager = manager, Diagnostics = true });
        var first = pool.Rent();
        first.Dispose();
        var second = pool.Rent(); // may well get the same array
        first.Dispose();          // stale: must do nothing
        Assert.Equal(1, pool.GetStatistics().Outstanding);
        second.Memory.Span[0] = 7; // still the second renter's
        second.Dispose();          // the strict manager would throw if the array had gone back already
        Assert.Equal(0, pool.GetStatistics().Outstanding);
    }

    [Fact]
    public void Diagnostic_mode_pins_and_unpins()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Diagnostics = true });
        using var owner = pool.Rent();
        using (var handle = owner.Memory.Pin())
        {
            unsafe { *(byte*)handle.Pointer = 9; }
        }
        Assert.Equal(9, owner.Memory.Span[0]);
    }

    [Fact]
    public void Pinned_pools_arrays_live_on_the_pinned_heap()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "pinned", Pinned = true });
        using var owner = pool.Rent();
        Assert.True(MemoryMarshal.TryGetArray<byte>(owner.Memory, out var segment));
        // A fresh ordinary 4 KiB array is in generation 0; the pinned object heap reports the oldest generation.
        Assert.Equal(GC.MaxGeneration, GC.GetGeneration(segment.Array!));
        using var handle = owner.Memory.Pin();
    }

    [Fact]
    public async Task A_pipe_over_the_pool_moves_every_byte_and_returns_every_segment()
    {
        using var manager = Strict("pipe");
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Manager = manager });
        var pipe = new Pipe(new PipeOptions(pool: pool, minimumSegmentSize: 4096, pauseWriterThreshold: 1 << 20, resumeWriterThreshold: 1 << 19, useSynchronizationContext: false));
        const int Total = 8 << 20;
        var writer = Task.Run(async () =>
        {
            int written = 0;
            while (written < Total)
            {
                var span = pipe.Writer.GetSpan(1);
                int n = Math.Min(span.Length, Math.Min(Total - written, 3000));
                for (int i = 0; i < n; i++) span[i] = (byte)(written + i);
                pipe.Writer.Advance(n);
                written += n;
                await pipe.Writer.FlushAsync();
            }
            await pipe.Writer.CompleteAsync();
        });
        long read = 0;
        bool ok = true;
        while (true)
        {
            var result = await pipe.Reader.ReadAsync();
            foreach (var memory in result.Buffer)
            {
                foreach (byte b in memory.Span) ok &= b == (byte)read++;
            }
            pipe.Reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted) break;
        }
        await pipe.Reader.CompleteAsync();
        await writer;
        Assert.True(ok, "a byte arrived out of order or changed");
        Assert.Equal(Total, read);
        var stats = pool.GetStatistics();
        Assert.True(stats.Rents > 0);
        Assert.Equal(0, stats.Outstanding);
        Assert.Equal(stats.Rents, stats.Returns);
    }

    [Fact]
    public void Owners_pin_and_unpin_as_pipes_and_sockets_do()
    {
        var pool = new BufferMemoryPool();
        var block = pool.Rent();
        block.Memory.Pin().Dispose();
        block.Dispose();
        pool.Dispose();
    }
}
