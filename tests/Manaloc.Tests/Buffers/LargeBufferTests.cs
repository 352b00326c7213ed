using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary>Buffers above 1 MiB are pooled (up to 64 MiB by default), with few copies kept per large class.</summary>
public sealed class LargeBufferTests
{
    [Theory]
    [InlineData(2 << 20)]
    [InlineData(4 << 20)]
    [InlineData((1 << 20) + 1)] // served by the 2 MiB class, as ArrayPool<byte>.Shared does
    [InlineData(64 << 20)]
    public void Large_rents_are_reused_and_allocate_nothing_after_warm_up(int length)
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "large", TrimAfterGen2 = false });
        var first = manager.Rent(length);
        Assert.Equal((int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)length), first.Length);
        manager.Return(first);
        for (int i = 0; i < 3; i++) manager.Return(manager.Rent(length)); // warm the paths up
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 10; i++)
        {
            var b = manager.Rent(length);
            Assert.Same(first, b);
            manager.Return(b);
        }
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.Equal(1, manager.GetStatistics(length).Creations);
    }

    [Fact]
    public void Large_classes_keep_few_buffers_and_small_ones_keep_a_thread_stack()
    {
        var options = new BufferManagerOptions();
        Assert.Equal(64 << 20, options.MaxBufferSize);
        Assert.Equal((1, 1, 1), BufferManager.ClassLimits(options, 64 << 20));
        Assert.Equal((4, 4, 4), BufferManager.ClassLimits(options, 4 << 20));
        Assert.Equal((8, 8, 4), BufferManager.ClassLimits(options, 2 << 20));
        Assert.Equal((4096, 8, 4), BufferManager.ClassLimits(options, 4096));
        // A tiny byte cap: small and mid classes still keep a thread's stack, large ones one buffer.
        var tight = new BufferManagerOptions { MaxRetainedBytesPerClass = 0 };
        Assert.Equal((8, 8, 4), BufferManager.ClassLimits(tight, 1 << 20));
        Assert.Equal((1, 1, 1), BufferManager.ClassLimits(tight, 8 << 20));
    }

    [Fact]
    public void Idle_large_buffers_go_back_under_memory_pressure()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "large-trim" });
        var held = Enumerable.Range(0, 3).Select(_ => manager.Rent(8 << 20)).ToArray();
        foreach (var b in held) manager.Return(b);
        Assert.True(manager.GetStatistics(8 << 20).Retained >= 1);
        manager.Trim(); // what a memory-pressure gen-2 pass does to every tier
        Assert.Equal(0, manager.GetStatistics(8 << 20).Retained);
    }
}
