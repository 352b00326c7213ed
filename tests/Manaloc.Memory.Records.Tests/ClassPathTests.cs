using System.Runtime.CompilerServices;
using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>New, Delete and NewArray of a [NativeRecord] interface use the compiled classes, not Reflection.Emit.</summary>
public class ClassPathTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void New_uses_the_compiled_class(bool isChecked)
    {
        long emittedBefore = TypeAllocator.GeneratedTypeCount;
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var record = allocator.New<IFooData>();
        Assert.Same(typeof(IFooData).Assembly, record.GetType().Assembly); // generated at compile time into this assembly
        Assert.IsAssignableFrom<CompiledRecord>(record);
        record.Id = 3;
        Assert.Equal(3, record.Id);
        Assert.Equal(typeof(IFooData), ((NativeRecord)(object)record).RecordInterface);
        allocator.Delete(record);
        if (isChecked) Assert.Throws<InvalidOperationException>(() => record.Id);
        Assert.Equal(emittedBefore, TypeAllocator.GeneratedTypeCount);
    }

    [Fact]
    public void Class_handles_used_after_Dispose_throw()
    {
        var allocator = new TypeAllocator();
        var record = allocator.New<IContended>();
        allocator.Dispose();
        Assert.Throws<ObjectDisposedException>(() => record.Hot);
    }

    [Fact]
    public void Record_arrays_use_the_compiled_views()
    {
        using var allocator = new TypeAllocator();
        using var array = allocator.NewArray<IFooData>(100);
        for (int i = 0; i < array.Length; i++) array.MoveTo(i).Count = i;
        long sum = 0;
        foreach (var view in array.Scan()) sum += view.Count;
        Assert.Equal(4950, sum);
        Assert.Same(typeof(IFooData).Assembly, array.View.GetType().Assembly);
        Assert.Same(typeof(IFooData).Assembly, array[0].GetType().Assembly); // the item class too
    }

    [Fact]
    public void The_run_time_path_still_serves_unmarked_interfaces_on_the_JIT()
    {
        Assert.True(RuntimeFeature.IsDynamicCodeSupported);
        using var allocator = new TypeAllocator();
        var record = allocator.New<IUnmarked>();
        record.Value = 4;
        Assert.Equal(4, record.Value);
        Assert.NotSame(typeof(IUnmarked).Assembly, record.GetType().Assembly);
        allocator.Delete(record);
    }
}

public interface IUnmarked
{
    int Value { get; set; }
}
