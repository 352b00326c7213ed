using System.Buffers;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary><see cref="BufferMemoryPool.Trim"/>: idle blocks on every thread given back at once, each array once, and the pool still usable.</summary>
public sealed class BufferMemoryPoolTrimTests
{
    /// <summary>Rents <paramref name="count"/> blocks on a thread of its own and returns them there (they stay on that thread's stack).</summary>
    private static void RentAndReturnOnAnotherThread(BufferMemoryPool pool, int count)
    {
        var thread = new Thread(() =>
        {
            var blocks = new List<IMemoryOwner<byte>>();
            for (int i = 0; i < count; i++) blocks.Add(pool.Rent());
            foreach (var block in blocks) block.Dispose();
        });
        thread.Start();
        thread.Join();
    }

    [Fact]
    public void Trim_gives_back_idle_blocks_of_every_thread_and_the_pool_keeps_working()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "trim", BlockSize = 4096 });
        // Threads that stay alive and quiet would keep their stacks until the pool's own idle timer; these exit, and the calling thread keeps some too.
        var quiet = new ManualResetEventSlim();
        var filled = new ManualResetEventSlim();
        var live = new Thread(() =>
        {
            var blocks = Enumerable.Range(0, 16).Select(_ => pool.Rent()).ToList();
            foreach (var block in blocks) block.Dispose();
            filled.Set();
            quiet.Wait();
        });
        live.Start();
        filled.Wait();
        RentAndReturnOnAnotherThread(pool, 16);
        var mine = Enumerable.Range(0, 8).Select(_ => pool.Rent()).ToList();
        foreach (var block in mine) block.Dispose();
        Assert.True(pool.GetStatistics().RetainedBytes >= 16 * 4096, $"blocks kept idle before the trim: {pool.GetStatistics().RetainedBytes}");

        pool.Trim();

        Assert.Equal(0, pool.GetStatistics().RetainedBytes);
        Assert.Equal(0, pool.GetStatistics().Outstanding);
        using (var again = pool.Rent()) Assert.Equal(4096, again.Memory.Length);
        quiet.Set();
        live.Join();
    }

    [Fact]
    public void Trim_returns_each_array_to_a_strict_manager_once_and_leaves_a_given_manager_its_idle_buffers()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "given", DebugMode = true }); // a second return of an array throws
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "trim-given", Manager = manager, BlockSize = 4096 });
        RentAndReturnOnAnotherThread(pool, 12);
        var blocks = Enumerable.Range(0, 12).Select(_ => pool.Rent()).ToList();
        foreach (var block in blocks) block.Dispose();

        pool.Trim();
        pool.Trim(); // nothing left to give back: no array is returned twice

        Assert.Equal(0, manager.GetStatistics().RentedBytes);
        Assert.True(manager.GetStatistics().RetainedBytes > 0, "the given manager keeps the arrays the owners gave back (its owner trims it)");
    }

    [Fact]
    public void Trims_racing_threads_that_rent_and_return_lose_nothing_and_return_nothing_twice()
    {
        // Trim drains live threads' stacks while their owners rent and return: the drain's hand-shake must give each
        // owner's claimed block to it alone. A block handed out twice would be disposed twice: the strict manager throws.
        using var manager = new BufferManager(new BufferManagerOptions { Name = "trim-race", DebugMode = true });
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "trim-race", Manager = manager, BlockSize = 4096 });
        var failures = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
        using var stop = new CancellationTokenSource();
        var workers = Enumerable.Range(0, 3).Select(w => new Thread(() =>
        {
            try
            {
                var held = new List<IMemoryOwner<byte>>();
                for (int i = 0; !stop.IsCancellationRequested; i++)
                {
                    var block = pool.Rent();
                    block.Memory.Span[0] = (byte)w;
                    held.Add(block);
                    if (held.Count > 1 + i % 7)
                    {
                        foreach (var b in held)
                        {
                            if (b.Memory.Span[0] != (byte)w) throw new InvalidOperationException("a block was handed to two renters");
                            b.Dispose();
                        }
                        held.Clear();
                    }
                }
                foreach (var b in held) b.Dispose();
            }
            catch (Exception e)
            {
                failures.Enqueue(e);
            }
        })).ToList();
        workers.ForEach(t => t.Start());
        var until = DateTime.UtcNow.AddMilliseconds(300);
        while (DateTime.UtcNow < until) pool.Trim();
        stop.Cancel();
        workers.ForEach(t => t.Join());

        Assert.Empty(failures);
        Assert.Equal(0, pool.GetStatistics().Outstanding);
        pool.Trim();
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }

    [Fact]
    public void Trim_after_dispose_does_nothing()
    {
        var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "trim-disposed" });
        pool.Rent().Dispose();
        pool.Dispose();
        pool.Trim();
        Assert.Equal(0, pool.GetStatistics().Outstanding);
    }
}
