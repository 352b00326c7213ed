using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// What the generated interceptors call (CompiledRecords.New, NewArray, PreGenerate), and the names the generated classes
/// show at run time: this project's own New/NewArray calls with [NativeRecord] interfaces are intercepted too (its project
/// imports the package's build/Manaloc.targets).
/// </summary>
public class CompiledEntryPointTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Class_handles_and_views_have_readable_type_names(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var record = allocator.New<IFooData>();
        using var array = allocator.NewArray<IFooData>(2);
        var view = array.MoveTo(1);

        string kind = isChecked ? "Checked" : "Unchecked";
        Assert.Equal($"IFooData_{kind}", record.GetType().Name);
        Assert.Equal($"Manaloc.Memory.Records.Tests.FooDataRef+IFooData_{kind}", record.GetType().FullName);
        Assert.Equal($"IFooData_{kind}View", view.GetType().Name);
        Assert.True(record.GetType().IsNestedPrivate, "users' code cannot name the generated class");
        allocator.Delete(record);
    }

    [Fact]
    public void The_interceptors_entry_points_allocate_through_the_registration()
    {
        using var allocator = new TypeAllocator();
        allocator.PreGenerate(typeof(IFooData), typeof(IPrimitives)); // intercepted: no Reflection.Emit
        CompiledRecords.PreGenerate(allocator, FooDataRef.RecordType);
        var record = CompiledRecords.New<IFooData>(allocator, FooDataRef.RecordType);
        record.Id = 7;
        Assert.Equal(7, record.Id);
        Assert.Equal("IFooData_Checked", record.GetType().Name);
        using var array = CompiledRecords.NewArray<IFooData>(allocator, 3, FooDataRef.RecordType);
        array.MoveTo(2).Count = 5;
        Assert.Equal(5, array.MoveTo(2).Count);
        allocator.Delete(record);
        Assert.Throws<ArgumentNullException>(() => CompiledRecords.PreGenerate(null!, FooDataRef.RecordType));
        Assert.Throws<NullReferenceException>(() => CompiledRecords.New<IFooData>(null!, FooDataRef.RecordType));
    }

    [Fact]
    public void A_registration_for_another_interface_is_refused_not_emitted()
    {
        // For generated code only, but a wrong pairing must say so rather than quietly use the run-time emitter.
        using var allocator = new TypeAllocator();
        var e = Assert.Throws<ArgumentException>(() => CompiledRecords.New<INotCompiled>(allocator, FooDataRef.RecordType));
        Assert.Contains("The compiled registration of IFooData does not implement CompiledEntryPointTests.INotCompiled", e.Message);
        e = Assert.Throws<ArgumentException>(() => CompiledRecords.NewArray<INotCompiled>(allocator, 1, FooDataRef.RecordType));
        Assert.Contains("does not implement CompiledEntryPointTests.INotCompiled", e.Message);
    }

    /// <summary>Unmarked, and used nowhere else, so no registration or emitted class exists for it.</summary>
    public interface INotCompiled
    {
        int A { get; set; }
    }
}
