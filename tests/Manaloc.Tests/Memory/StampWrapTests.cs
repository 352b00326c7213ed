using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>
/// A slot's 32-bit stamp wraps after 2^31 New/Delete pairs (tens of seconds for one hot slot). A deleted handle must
/// still never pass its check on a free block, nor free a live record with a second Delete. The wrap is simulated by
/// writing the stamp the slot would hold by then.
/// </summary>
public sealed unsafe class StampWrapTests
{
    [Fact]
    public void A_deleted_handle_fails_on_a_free_block_whatever_value_the_stamp_wrapped_to()
    {
        using var allocator = new TypeAllocator();
        var record = allocator.New<IFooData>();
        var handle = (NativeRecord)(object)record;
        allocator.Delete(record);
        ref uint stamp = ref *handle.StampAddress;
        uint free = stamp;
        try
        {
            // Free stamps are even; 0 is the one a deleted handle used to carry.
            foreach (uint wrapped in new uint[] { 0, 2, free + 2 })
            {
                stamp = wrapped;
                Assert.Throws<InvalidOperationException>(() => record.Bar);
                Assert.Throws<InvalidOperationException>(() => record.Bar = 1);
                Assert.False(handle.IsAllocated);
            }
        }
        finally
        {
            stamp = free;
        }
    }

    [Fact]
    public void A_second_Delete_after_the_stamp_wrapped_to_the_handles_generation_frees_nothing()
    {
        using var allocator = new TypeAllocator();
        var record = allocator.New<IFooData>();
        var handle = (NativeRecord)(object)record;
        uint generation = handle.Generation;
        allocator.Delete(record);
        ref uint stamp = ref *handle.StampAddress;
        uint free = stamp;
        try
        {
            stamp = generation; // as if the slot were live again, 2^31 uses later, with this generation
            Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => allocator.Delete(record)).Message);
            Assert.Equal(generation, stamp); // the live record's stamp was not released
        }
        finally
        {
            stamp = free;
        }
    }

    [Fact]
    public void A_large_records_block_taken_again_from_the_pool_gets_a_newer_generation()
    {
        // Records larger than the largest slab class get a block of their own, which is pooled, not freed: the next record
        // of that size takes the same block back, and a stale handle to the old record must not match the new one.
        using var allocator = new TypeAllocator();
        var first = (NativeRecord)(object)allocator.New<IHuge>();
        Assert.True(first.StampOffset > NativeSlabAllocator.LargestClassSize); // its own block, its stamp at the end
        byte* address = first.Address;
        uint generation = first.Generation;
        allocator.Delete((IHuge)(object)first);
        var second = (NativeRecord)(object)allocator.New<IHuge>();
        // The pool hands the block back (unless a test running in parallel took it first).
        if (second.Address == address) Assert.True(second.Generation > generation);
        Assert.Equal(1u, second.Generation & 1);
        Assert.Throws<InvalidOperationException>(() => ((IHuge)(object)first).Far);
        Assert.False(first.IsAllocated);
        Assert.True(second.IsAllocated);
        allocator.Delete((IHuge)(object)second);
    }
}

public interface IHuge
{
    [RecordOffset(9000)] long Far { get; set; }
}
