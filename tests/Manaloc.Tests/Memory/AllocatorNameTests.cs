using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>The allocators say who they are: every disposal error names the allocator, and ToString shows name and state.</summary>
public sealed unsafe class AllocatorNameTests
{
    [Fact]
    public void Every_use_of_a_disposed_TypeAllocator_names_it()
    {
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "quotes", LeakReported = null });
        var record = allocator.New<IFooData>();
        allocator.Dispose();
        var errors = new List<ObjectDisposedException>
        {
            Assert.Throws<ObjectDisposedException>(() => allocator.New<IFooData>()),
            Assert.Throws<ObjectDisposedException>(() => allocator.Delete(record)),
            Assert.Throws<ObjectDisposedException>(() => allocator.GetThreadHeap()),
            Assert.Throws<ObjectDisposedException>(() => allocator.NewArray<IFooData>(4)),
        };
        foreach (var error in errors)
        {
            Assert.Contains("TypeAllocator 'quotes'", error.Message, StringComparison.Ordinal);
            Assert.Equal("TypeAllocator 'quotes'", error.ObjectName);
        }
    }

    [Fact]
    public void Every_use_of_a_disposed_NativeSlabAllocator_names_it()
    {
        var slab = new NativeSlabAllocator("buffers");
        var heap = slab.GetThreadHeap();
        void* raw = slab.Allocate(16);
        var block = slab.AllocateBlock(32);
        slab.Dispose();
        var errors = new List<ObjectDisposedException>
        {
            Assert.Throws<ObjectDisposedException>(() => slab.Allocate(16)),
            Assert.Throws<ObjectDisposedException>(() => slab.Allocate(100_000)),
            Assert.Throws<ObjectDisposedException>(() => slab.Free(raw)),
            Assert.Throws<ObjectDisposedException>(() => slab.Free(block)),
            Assert.Throws<ObjectDisposedException>(() => block.AsSpan()),
            Assert.Throws<ObjectDisposedException>(() => slab.GetThreadHeap()),
            Assert.Throws<ObjectDisposedException>(() => heap.Allocate(16)),
            Assert.Throws<ObjectDisposedException>(() => heap.Free(raw)),
        };
        foreach (var error in errors) Assert.Equal("NativeSlabAllocator 'buffers'", error.ObjectName);
    }

    [Fact]
    public void ToString_shows_the_name_the_mode_the_live_blocks_and_disposal()
    {
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "quotes", LeakReported = null });
        Assert.Equal("TypeAllocator 'quotes' (checked, 0 live blocks)", allocator.ToString());
        var records = Enumerable.Range(0, 12).Select(_ => allocator.New<IFooData>()).ToList();
        Assert.Equal("TypeAllocator 'quotes' (checked, 12 live blocks)", allocator.ToString());
        allocator.Delete(records[0]);
        Assert.Equal("TypeAllocator 'quotes' (checked, 11 live blocks)", allocator.ToString());
        allocator.Dispose();
        Assert.Equal("TypeAllocator 'quotes' (disposed)", allocator.ToString());

        using var loose = new TypeAllocator(new TypeAllocatorOptions { Name = "loose", Checked = false });
        Assert.Equal("TypeAllocator 'loose' (unchecked, 0 live blocks)", loose.ToString());

        var slab = new NativeSlabAllocator("buffers");
        void* p = slab.Allocate(64);
        Assert.Equal("NativeSlabAllocator 'buffers' (1 live block)", slab.ToString());
        slab.Free(p);
        slab.Dispose();
        Assert.Equal("NativeSlabAllocator 'buffers' (disposed)", slab.ToString());
    }
}
