using System.Buffers;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary><see cref="BufferManager.Shared"/> is Manaloc's process-wide manager, not the inherited <see cref="ArrayPool{T}.Shared"/>.</summary>
public sealed class BufferManagerSharedTests
{
    [Fact]
    public void Shared_is_Manalocs_manager_and_reuses_its_buffers()
    {
        BufferManager shared = BufferManager.Shared;
        Assert.NotSame(ArrayPool<byte>.Shared, shared);
        Assert.Same(shared, BufferManager.Shared);
        Assert.Equal("buffers.shared", shared.Name);
        long before = shared.GetStatistics(4096).Rents;
        var a = shared.Rent(4096);
        shared.Return(a);
        Assert.Same(a, shared.Rent(4096)); // the same thread gets its hot buffer back
        Assert.Equal(before + 2, shared.GetStatistics(4096).Rents);
    }

    [Fact]
    public void Disposing_Shared_does_nothing()
    {
        BufferManager.Shared.Dispose();
        var a = BufferManager.Shared.Rent(100);
        Assert.True(a.Length >= 100);
        BufferManager.Shared.Return(a);
    }
}
