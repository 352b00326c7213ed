using System.Reflection;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>
/// Copies of a checked handle made behind the allocator's back (MemberwiseClone through reflection, or any field copy)
/// are checked like the original: the check compares the record's stamp in memory, not something only the original holds.
/// </summary>
public sealed unsafe class HandleCopyTests
{
    private static readonly MethodInfo s_clone = typeof(object).GetMethod("MemberwiseClone", BindingFlags.Instance | BindingFlags.NonPublic)!;

    private static T Copy<T>(T handle) where T : class => (T)s_clone.Invoke(handle, null)!;

    [Fact]
    public void A_copy_read_after_Delete_throws_instead_of_reading_freed_memory()
    {
        using var allocator = new TypeAllocator();
        var original = allocator.New<IFooData>();
        original.Bar = 17;
        var copy = Copy(original);
        Assert.Equal(17, copy.Bar);
        allocator.Delete(original);
        Assert.Throws<InvalidOperationException>(() => copy.Bar);
        Assert.Throws<InvalidOperationException>(() => copy.Bar = 1);
        Assert.False(((NativeRecord)(object)copy).IsAllocated);
    }

    [Fact]
    public void A_write_through_a_copy_after_Delete_and_New_throws_and_leaves_the_new_record_and_the_free_list_intact()
    {
        using var allocator = new TypeAllocator();
        var original = allocator.New<IFooData>();
        var copy = Copy(original);
        allocator.Delete(original);
        var next = allocator.New<IFooData>(); // same thread: the same block again
        Assert.True(((NativeRecord)(object)next).Address == ((NativeRecord)(object)copy).Address, "the block was reused");
        next.Jar = 99;
        Assert.Throws<InvalidOperationException>(() => copy.Jar = 12345);
        Assert.Throws<InvalidOperationException>(() => copy.Jar);
        Assert.Equal(99, next.Jar);
        allocator.Delete(next);
        // The free list was not written through the copy: many more New/Delete pairs work.
        var many = Enumerable.Range(0, 1000).Select(_ => allocator.New<IFooData>()).ToList();
        foreach (var record in many) allocator.Delete(record);
        Assert.Equal(0, allocator.CountLiveObjects());
    }

    [Fact]
    public void A_copy_cannot_Delete_the_record_a_second_time_nor_free_the_next_one()
    {
        using var allocator = new TypeAllocator();
        var original = allocator.New<IFooData>();
        var copy = Copy(original);
        allocator.Delete(original);
        Assert.Throws<InvalidOperationException>(() => allocator.Delete(copy));
        var next = allocator.New<IFooData>();
        Assert.Throws<InvalidOperationException>(() => allocator.Delete(copy));
        Assert.True(((NativeRecord)(object)next).IsAllocated);
        allocator.Delete(next);
    }

    [Fact]
    public void A_copy_used_after_the_allocator_was_disposed_throws_ObjectDisposedException()
    {
        var allocator = new TypeAllocator();
        var original = allocator.New<IFooData>();
        var copy = Copy(original);
        allocator.Dispose();
        Assert.Throws<ObjectDisposedException>(() => copy.Bar);
        Assert.Throws<ObjectDisposedException>(() => copy.Bar = 3);
    }

    [Fact]
    public void A_copy_of_a_large_record_is_checked_too()
    {
        using var allocator = new TypeAllocator();
        var original = allocator.New<IVeryLarge>();
        original.Last = 5;
        var copy = Copy(original);
        Assert.Equal(5, copy.Last);
        allocator.Delete(original);
        Assert.Throws<InvalidOperationException>(() => copy.Last);
        Assert.Throws<InvalidOperationException>(() => copy.Last = 6);
    }
}
