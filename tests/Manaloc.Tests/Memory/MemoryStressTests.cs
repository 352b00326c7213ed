using System.Collections.Concurrent;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>Many threads allocate, hand objects to each other and free them; bounded by counts and a progress watchdog.</summary>
public sealed unsafe class MemoryStressTests
{
    private const int Threads = 4;
    private static readonly TimeSpan s_noProgress = TimeSpan.FromSeconds(10);

    [Theory]
    [InlineData(true, false)]
    [InlineData(false, true)] // recycled handles: a handle deleted on one thread serves the next New there
    public void TypeAllocator_new_and_cross_thread_delete_keep_every_value_and_leave_nothing(bool isChecked, bool recycle)
    {
        LiveObjectReport? leaked = null;
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked, RecycleHandles = recycle, LeakReported = r => leaked = r });
        var handOff = new ConcurrentQueue<(IFooData Record, int Value)>();
        long progress = 0;
        var errors = new ConcurrentQueue<string>();
        Run(t =>
        {
            var random = new Random(t);
            var mine = new List<(IFooData, int)>();
            for (int i = 0; i < 20_000; i++)
            {
                var f = allocator.New<IFooData>();
                int value = t * 1_000_000 + i;
                f.Bar = value; f.Jar = value; f.Tar = (byte)value;
                if (random.Next(2) == 0) handOff.Enqueue((f, value)); else mine.Add((f, value));
                if (mine.Count > 64 || random.Next(8) == 0)
                {
                    foreach (var (r, v) in mine) Check(r, v);
                    mine.Clear();
                }
                if (handOff.TryDequeue(out var other)) Check(other.Record, other.Value);
                Interlocked.Increment(ref progress); // watchdog only
            }
            foreach (var (r, v) in mine) Check(r, v);

            void Check(IFooData r, int v)
            {
                if (r.Bar != v || r.Jar != v || r.Tar != (byte)v) errors.Enqueue($"value {v} read back as {r.Bar}/{r.Jar}/{r.Tar}");
                allocator.Delete(r);
            }
        }, () => Interlocked.Read(ref progress));
        while (handOff.TryDequeue(out var rest)) allocator.Delete(rest.Record);
        Assert.Empty(errors);
        Assert.Equal(0, allocator.CountLiveObjects());
        allocator.Dispose();
        Assert.Null(leaked);
        Assert.Equal(0, allocator.LastLeakReport!.TotalCount);
    }

    [Fact]
    public void Slab_blocks_freed_on_other_threads_are_never_handed_out_twice()
    {
        using var slab = new NativeSlabAllocator("stress");
        var handOff = new ConcurrentQueue<(nint Pointer, int Size, long Stamp)>();
        long progress = 0;
        var errors = new ConcurrentQueue<string>();
        Run(t =>
        {
            var random = new Random(100 + t);
            for (int i = 0; i < 40_000; i++)
            {
                int size = random.Next(8, 2048);
                long stamp = ((long)t << 32) | (uint)i;
                long* p = (long*)slab.Allocate((nuint)size);
                p[0] = stamp;
                p[size / 8 - 1] = stamp;
                handOff.Enqueue(((nint)p, size, stamp));
                if (random.Next(3) != 0 && handOff.TryDequeue(out var other)) Verify(other);
                Interlocked.Increment(ref progress); // watchdog only
            }

            void Verify((nint Pointer, int Size, long Stamp) b)
            {
                long* q = (long*)b.Pointer;
                if (q[0] != b.Stamp || q[b.Size / 8 - 1] != b.Stamp) errors.Enqueue($"block {b.Stamp:x} was overwritten");
                q[0] = -1;
                slab.Free(q);
            }
        }, () => Interlocked.Read(ref progress));
        while (handOff.TryDequeue(out var rest)) slab.Free((void*)rest.Pointer);
        Assert.Empty(errors);
        Assert.Equal(0, slab.GetStatistics().LiveBlocks);
    }

    private static void Run(Action<int> body, Func<long> progress)
    {
        var failures = new ConcurrentQueue<Exception>();
        var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            try { body(t); }
            catch (Exception e) { failures.Enqueue(e); }
        }) { IsBackground = true }).ToArray();
        foreach (var thread in threads) thread.Start();
        long last = -1;
        var lastChange = DateTime.UtcNow;
        while (threads.Any(t => t.IsAlive))
        {
            Thread.Sleep(50);
            long now = progress();
            if (now != last) { last = now; lastChange = DateTime.UtcNow; }
            Assert.True(DateTime.UtcNow - lastChange < s_noProgress, $"no progress for {s_noProgress.TotalSeconds} s at {now} operations");
        }
        Assert.Empty(failures);
    }
}
