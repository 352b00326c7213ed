using System.Reflection;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class TypeAllocatorGenerationTests
{
    private static readonly MethodInfo s_new = typeof(TypeAllocator).GetMethod(nameof(TypeAllocator.New))!;

    private static object New(TypeAllocator allocator, Type type) => s_new.MakeGenericMethod(type).Invoke(allocator, null)!;

    [Fact]
    public void Many_threads_racing_on_an_unseen_type_generate_it_exactly_once()
    {
        var type = RuntimeInterfaces.DefineUnseen();
        using var allocator = new TypeAllocator();
        Assert.Equal(0, RecordTypes.GenerationsOf(type));
        const int threads = 8;
        using var barrier = new Barrier(threads);
        var results = new object[threads];
        var workers = Enumerable.Range(0, threads).Select(i => new Thread(() =>
        {
            barrier.SignalAndWait();
            results[i] = New(allocator, type);
        })).ToArray();
        foreach (var t in workers) t.Start();
        foreach (var t in workers) Assert.True(t.Join(TimeSpan.FromSeconds(30)), "a worker hung");
        Assert.Equal(1, RecordTypes.GenerationsOf(type));
        Assert.Single(results.Select(r => r.GetType()).Distinct());
        Assert.All(results, r => Assert.True(type.IsInstanceOfType(r)));
    }

    [Fact]
    public void After_PreGenerate_New_generates_nothing()
    {
        var type = RuntimeInterfaces.DefineUnseen();
        using var allocator = new TypeAllocator();
        allocator.PreGenerate(type);
        Assert.Equal(3, RecordTypes.GenerationsOf(type)); // a checked allocator's handle, its record-array view and item
        var record = New(allocator, type);
        var array = typeof(TypeAllocator).GetMethod(nameof(TypeAllocator.NewArray))!.MakeGenericMethod(type).Invoke(allocator, [3])!;
        var item = array.GetType().GetProperty("Item")!.GetValue(array, [1])!; // the indexer's item
        Assert.True(type.IsInstanceOfType(item));
        Assert.Equal(3, RecordTypes.GenerationsOf(type));
        type.GetProperty("A")!.SetValue(record, 12);
        Assert.Equal(12, type.GetProperty("A")!.GetValue(record));
    }

    [Fact]
    public void Checked_and_unchecked_modes_get_their_own_implementation()
    {
        var type = RuntimeInterfaces.DefineUnseen();
        using var a = new TypeAllocator();
        using var b = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        Assert.NotEqual(New(a, type).GetType(), New(b, type).GetType());
    }

    [Fact]
    public void Generated_record_types_have_no_public_constructor()
    {
        using var allocator = new TypeAllocator();
        var record = allocator.New<IFooData>();
        Assert.Empty(record.GetType().GetConstructors());
        Assert.ThrowsAny<MissingMethodException>(() => Activator.CreateInstance(record.GetType()));
        allocator.Delete(record);
    }
}
