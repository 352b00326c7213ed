using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>Zeroing checked on reused blocks: fresh chunk memory is zero anyway and would hide a missing clear.</summary>
public sealed unsafe class ReusedBlockZeroingTests
{
    [Fact]
    public void New_zeroes_a_reused_block()
    {
        using var allocator = new TypeAllocator();
        var first = allocator.New<IFooData>();
        byte* p = ((NativeRecord)(object)first).Address;
        int size = allocator.GetLayout(typeof(IFooData)).Size;
        new Span<byte>(p, size).Fill(0xFF);
        allocator.Delete(first);
        var second = allocator.New<IFooData>();
        Assert.True(((NativeRecord)(object)second).Address == p, "the same block is reused on the same thread");
        Assert.True(new Span<byte>(p, size).IndexOfAnyExcept((byte)0) < 0, "the reused record is not zeroed");
        allocator.Delete(second);
    }

    [Theory]
    [InlineData(100)]
    [InlineData(100_000)]
    public void AllocateBlock_zeroes_a_reused_block_by_default(int size)
    {
        using var slab = new NativeSlabAllocator();
        var first = slab.AllocateBlock((nuint)size);
        first.AsSpan().Fill(0xFF);
        slab.Free(first);
        var second = slab.AllocateBlock((nuint)size);
        Assert.True(second.AsSpan().IndexOfAnyExcept((byte)0) < 0, "the reused block is not zeroed");
        slab.Free(second);
    }

    [Fact]
    public void AllocateBlock_keeps_a_small_reused_block_as_is_when_not_zeroed()
    {
        using var slab = new NativeSlabAllocator();
        var first = slab.AllocateBlock(100);
        first.AsSpan().Fill(0xFF);
        slab.Free(first);
        var second = slab.AllocateBlock(100, zeroed: false);
        Assert.True(second.GetPointer() == (byte*)first.Pointer, "the same block is reused on the same thread");
        // Past the free-list link the old bytes remain: proves the zeroed test above sees a reused block.
        Assert.Equal((byte)0xFF, second.AsSpan()[99]);
        slab.Free(second);
    }

    [Fact]
    public void NewArray_does_not_hand_out_a_disposed_arrays_block_while_its_view_is_reachable_and_zeroes_what_it_hands_out()
    {
        using var allocator = new TypeAllocator();
        var first = allocator.NewArray<IFooData>(10);
        var view = first.MoveTo(0);
        byte* p = ((NativeRecord)(object)view).Address;
        new Span<byte>(p, first.Length * first.Stride).Fill(0xFF);
        first.Dispose();
        using var second = allocator.NewArray<IFooData>(10);
        // A reader still holding the first array's view must not reach the second: the block is released only later.
        Assert.True(((NativeRecord)(object)second.MoveTo(0)).Address != p, "a disposed array's block was handed out while its view was reachable");
        foreach (var r in second) Assert.Equal(0, r.Bar);
        GC.KeepAlive(view);
    }
}
