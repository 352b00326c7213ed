using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed unsafe class NativeSlabAllocatorTests
{
    [Fact]
    public void Blocks_of_every_size_are_aligned_writable_and_disjoint()
    {
        using var slab = new NativeSlabAllocator("test");
        var blocks = new List<(nint Pointer, int Size, byte Fill)>();
        var random = new Random(1);
        for (int i = 0; i < 3000; i++)
        {
            int size = i < 200 ? i : random.Next(0, 20_000);
            byte* p = (byte*)slab.Allocate((nuint)size);
            Assert.Equal(0u, (uint)((nuint)p % 16));
            byte fill = (byte)i;
            new Span<byte>(p, size).Fill(fill);
            blocks.Add(((nint)p, size, fill));
        }
        foreach (var (pointer, size, fill) in blocks)
        {
            Assert.True(new Span<byte>((byte*)pointer, size).IndexOfAnyExcept(fill) < 0, "a block was overwritten by another");
        }
        foreach (var (pointer, _, _) in blocks) slab.Free((void*)pointer);
        slab.Free(null);
        var stats = slab.GetStatistics();
        Assert.Equal(0, stats.LiveBlocks);
        Assert.Equal(0, stats.LargeBlocks);
    }

    [Theory]
    [InlineData(32)]
    [InlineData(64)]
    [InlineData(4096)]
    public void Alignment_requests_are_honoured(int alignment)
    {
        using var slab = new NativeSlabAllocator();
        for (int size = 1; size < 10_000; size = size * 3 + 1)
        {
            void* p = slab.Allocate((nuint)size, (nuint)alignment);
            Assert.Equal(0u, (uint)((nuint)p % (nuint)alignment));
            slab.Free(p);
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => slab.Allocate(8, 3));
    }

    [Fact]
    public void Empty_chunks_are_given_back()
    {
        using var slab = new NativeSlabAllocator();
        var pointers = new List<nint>();
        for (int i = 0; i < 20_000; i++) pointers.Add((nint)slab.Allocate(64));
        long peak = slab.GetStatistics().Chunks;
        Assert.True(peak >= 10, $"expected many chunks, got {peak}");
        foreach (var p in pointers) slab.Free((void*)p);
        slab.FlushThreadCache();
        slab.Trim();
        Assert.Equal(0, slab.GetStatistics().Chunks);
        Assert.Equal(0, slab.GetStatistics().ReservedBytes);
        // Without Trim at most one empty chunk per class stays.
        for (int i = 0; i < 5000; i++) pointers[i] = (nint)slab.Allocate(64);
        for (int i = 0; i < 5000; i++) slab.Free((void*)pointers[i]);
        slab.FlushThreadCache();
        Assert.True(slab.GetStatistics().Chunks <= 1, $"{slab.GetStatistics().Chunks} chunks kept");
    }

    [Fact]
    public void Checked_blocks_detect_double_free_use_after_free_foreign_free_and_dispose()
    {
        var slab = new NativeSlabAllocator("a");
        using var other = new NativeSlabAllocator("b");
        var block = slab.AllocateBlock(100);
        Assert.True(block.IsAllocated);
        Assert.Equal(100, block.AsSpan().Length);
        Assert.True(block.AsSpan().IndexOfAnyExcept((byte)0) < 0, "zeroed");
        Assert.Throws<ArgumentException>(() => other.Free(block));
        Assert.Throws<ArgumentException>(() => slab.Free(default(NativeBlock)));
        Assert.False(default(NativeBlock).IsAllocated);
        slab.Free(block);
        Assert.False(block.IsAllocated);
        Assert.Throws<InvalidOperationException>(() => block.AsSpan());
        Assert.Throws<InvalidOperationException>(() => slab.Free(block));
        var again = slab.AllocateBlock(100);
        Assert.True(again.GetPointer() == (byte*)block.Pointer, "same slot reused");
        Assert.Throws<InvalidOperationException>(() => block.GetPointer());
        var large = slab.AllocateBlock(1 << 20);
        large.AsSpan().Fill(1);
        slab.Free(large);
        Assert.Throws<InvalidOperationException>(() => slab.Free(large));
        var live = slab.AllocateBlock(1 << 20);
        slab.Dispose();
        Assert.False(again.IsAllocated);
        Assert.False(live.IsAllocated);
        Assert.Throws<ObjectDisposedException>(() => again.AsSpan());
        Assert.Throws<ObjectDisposedException>(() => live.AsSpan());
        Assert.Throws<ObjectDisposedException>(() => slab.Allocate(16));
        Assert.Throws<ObjectDisposedException>(() => slab.Free(again));
        slab.Dispose();
    }

    [Fact]
    public void Raw_free_after_dispose_throws_instead_of_reading_the_released_chunk()
    {
        var slab = new NativeSlabAllocator();
        void* small = slab.Allocate(48);
        void* large = slab.Allocate(1 << 20);
        slab.Dispose();
        Assert.Throws<ObjectDisposedException>(() => slab.Free(small));
        Assert.Throws<ObjectDisposedException>(() => slab.Free(large));
    }

    [Fact]
    public void Raw_free_of_an_unknown_chunk_aligned_pointer_throws()
    {
        using var slab = new NativeSlabAllocator();
        Assert.Throws<ArgumentException>(() => slab.Free((void*)(nint)(1 << 20)));
    }

    [Fact]
    public void Statistics_count_allocations_frees_and_bytes()
    {
        using var slab = new NativeSlabAllocator();
        var a = slab.Allocate(10);
        var b = slab.Allocate(100_000);
        var stats = slab.GetStatistics();
        Assert.Equal(2, stats.Allocations);
        Assert.Equal(2, stats.LiveBlocks);
        Assert.Equal(1, stats.LargeBlocks);
        Assert.True(stats.ReservedBytes >= 128 * 1024 + 100_000);
        slab.Free(a);
        slab.Free(b);
        Assert.Equal(0, slab.GetStatistics().LiveBlocks);
    }

    [Fact]
    public void Large_blocks_released_by_Dispose_count_as_frees()
    {
        var slab = new NativeSlabAllocator();
        void* kept = slab.Allocate(1 << 20);
        slab.Free(slab.Allocate(1 << 20));
        Assert.True(kept != null);
        slab.Dispose();
        var stats = slab.GetStatistics();
        Assert.Equal(2, stats.Allocations);
        Assert.Equal(2, stats.Frees);
        Assert.Equal(0, stats.LiveBlocks);
        Assert.Equal(0, stats.LargeBlocks);
    }

    [Fact]
    public void Small_sizes_take_the_smallest_class_that_holds_them()
    {
        for (nuint size = 0; size <= (nuint)SizeClasses.SmallLimit; size++)
        {
            int cls = SizeClasses.ForSmall(size);
            Assert.Equal(SizeClasses.ForSize(size, 16), cls);
            Assert.True((nuint)SizeClasses.Sizes[cls] >= size, $"{size} B in class {cls} of {SizeClasses.Sizes[cls]} B");
            Assert.True(cls == 0 || (nuint)SizeClasses.Sizes[cls - 1] < size, $"{size} B fits class {cls - 1} already");
        }
    }

    [Fact]
    public unsafe void Every_small_size_allocates_a_block_that_holds_it()
    {
        using var slab = new NativeSlabAllocator("small-sizes");
        var blocks = new List<nint>();
        for (nuint size = 0; size <= (nuint)SizeClasses.SmallLimit + 1; size++)
        {
            byte* p = (byte*)slab.Allocate(size);
            Assert.Equal(0u, (uint)((nuint)p % 16));
            new Span<byte>(p, (int)Math.Max(size, 1)).Fill(0xAB); // the whole size is ours
            blocks.Add((nint)p);
        }
        Assert.Equal(blocks.Count, blocks.Distinct().Count());
        foreach (var p in blocks) slab.Free((void*)p);
        Assert.Equal(0, slab.GetStatistics().LiveBlocks);
    }
}
