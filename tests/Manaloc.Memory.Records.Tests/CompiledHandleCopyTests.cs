using System.Reflection;
using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// A compiled class handle copied behind the allocator's back (MemberwiseClone) keeps its address after Delete: its
/// checked accessors compare the block's stamp, so the copy throws instead of reading or writing the freed block, also
/// after the block was handed out again.
/// </summary>
public sealed class CompiledHandleCopyTests
{
    private static readonly MethodInfo s_clone = typeof(object).GetMethod("MemberwiseClone", BindingFlags.Instance | BindingFlags.NonPublic)!;

    [Fact]
    public void A_copy_of_a_deleted_compiled_handle_throws_and_leaves_the_next_record_alone()
    {
        using var allocator = new TypeAllocator();
        var original = allocator.New<IFooData>();
        var copy = (IFooData)s_clone.Invoke(original, null)!;
        allocator.Delete(original);
        var next = allocator.New<IFooData>(); // likely the same block, handed out again
        next.Count = 7;
        Assert.Throws<InvalidOperationException>(() => copy.Count);
        Assert.Throws<InvalidOperationException>(() => copy.Count = 99);
        Assert.Equal(7, next.Count);
        allocator.Delete(next);
    }

    [Fact]
    public void Large_unchecked_struct_handles_delete_once_and_report_allocation()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        var a = LargeUncheckedRef.New(allocator);
        Assert.True(a.IsAllocated);
        a.Far = 5;
        Assert.Equal(5, a.Far);
        a.Delete(allocator);
        Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => a.Delete(allocator)).Message);
        var checkedOne = LargeRef.New(allocator);
        Assert.True(checkedOne.IsAllocated);
        checkedOne.Delete(allocator);
        Assert.False(checkedOne.IsAllocated);
    }
}
