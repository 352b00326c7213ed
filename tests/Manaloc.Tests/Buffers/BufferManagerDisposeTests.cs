using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary>After Dispose every rent throws <see cref="ObjectDisposedException"/>, as documented, whatever the size and thread.</summary>
public sealed class BufferManagerDisposeTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(64)]
    [InlineData(1 << 16)]
    [InlineData((1 << 16) + 1)] // above MaxBufferSize: unpooled, but the manager is still disposed
    public void Every_rent_after_Dispose_throws(int length)
    {
        var manager = new BufferManager(new BufferManagerOptions { Name = "disposed-sizes", MaxBufferSize = 1 << 16 });
        manager.Return(manager.Rent(64));
        manager.Dispose();
        Assert.Throws<ObjectDisposedException>(() => manager.Rent(length));
        Assert.Throws<ObjectDisposedException>(() => manager.RentBuffer(length));
    }

    [Fact]
    public void Rents_after_Dispose_throw_on_a_thread_that_holds_hot_and_stacked_buffers()
    {
        var manager = new BufferManager(new BufferManagerOptions { Name = "disposed-threads" });
        using var used = new ManualResetEventSlim();
        using var disposed = new ManualResetEventSlim();
        var outcomes = new List<string>();
        var worker = new Thread(() =>
        {
            var held = Enumerable.Range(0, 4).Select(_ => manager.Rent(4096)).ToArray();
            foreach (var b in held) manager.Return(b); // one hot, three on the thread's stack
            used.Set();
            disposed.Wait();
            for (int i = 0; i < 6; i++)
            {
                try { manager.Rent(4096); outcomes.Add("rented"); }
                catch (ObjectDisposedException) { outcomes.Add("threw"); }
            }
        });
        worker.Start();
        Assert.True(used.Wait(TimeSpan.FromSeconds(30)));
        manager.Dispose();
        disposed.Set();
        Assert.True(worker.Join(TimeSpan.FromSeconds(30)));
        Assert.All(outcomes, o => Assert.Equal("threw", o));
        Assert.Equal(0, manager.GetStatistics().Retained);
    }
}
