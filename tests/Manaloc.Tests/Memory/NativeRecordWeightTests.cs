using System.Text.Json;
using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Tests.Memory;

/// <summary>A per-object handle weighs what a plain class of the same data does, and serializes as its data.</summary>
public sealed class NativeRecordWeightTests
{
    /// <summary>IFooData's data as a plain class: int, long, double, byte (24 bytes of fields, a 40-byte object).</summary>
    private sealed class PlainFoo(int bar, long jar, double car, byte tar)
    {
        public int Bar = bar;
        public long Jar = jar;
        public double Car = car;
        public byte Tar = tar;
    }

    private const int Count = 1000;

    [Fact]
    public void A_handle_holds_no_reference_a_collection_would_trace()
    {
        // What a full collection costs per handle: a plain object's marking (a reference field, even a null one, makes the
        // collector scan the object). Every field of a handle's class is a value; only record-array views keep a chunk.
        foreach (var type in new[] { typeof(NativeRecord), typeof(CompiledRecord) })
        {
            Assert.All(type.GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public),
                f => Assert.True(f.FieldType.IsValueType || f.FieldType.IsPointer, $"{type.Name}.{f.Name} is a {f.FieldType}"));
        }
        using var allocator = new TypeAllocator();
        var small = (NativeRecord)(object)allocator.New<IFooData>();
        var large = (NativeRecord)(object)allocator.New<IHuge>();
        Assert.Empty(small.GetType().GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.DeclaredOnly));
        Assert.True(small.IsAllocated && large.IsAllocated);
        allocator.Delete((IFooData)(object)small);
        allocator.Delete((IHuge)(object)large);
        Assert.False(small.IsAllocated || large.IsAllocated);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void New_allocates_no_more_managed_bytes_per_record_than_a_plain_class_of_the_same_data(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var handles = new IFooData[Count];
        var plain = new PlainFoo[Count];
        // Warm up: the type generated, a chunk carved, the thread cache made, the code jitted.
        for (int i = 0; i < Count; i++) handles[i] = allocator.New<IFooData>();
        for (int i = 0; i < Count; i++) allocator.Delete(handles[i]);
        for (int i = 0; i < Count; i++) plain[i] = new PlainFoo(i, i, i, 1);

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Count; i++) handles[i] = allocator.New<IFooData>();
        long handleBytes = GC.GetAllocatedBytesForCurrentThread() - before;
        before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Count; i++) plain[i] = new PlainFoo(i, i, i, 1);
        long plainBytes = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(40L * Count, plainBytes);
        Assert.True(handleBytes <= plainBytes, $"handles took {handleBytes} B for {Count} records, the plain class {plainBytes} B");
        // Nothing else per record on the managed heap: no side tables (stamps and tags live in the native blocks). The
        // handle is a 32-byte object: 16 bytes of fields (address, generation, recycling index, flags) and no reference.
        Assert.Equal(32L * Count, handleBytes);
        foreach (var h in handles) allocator.Delete(h);
    }

    [Fact]
    public void A_handle_serialized_as_object_writes_its_data_and_none_of_the_infrastructure()
    {
        using var allocator = new TypeAllocator();
        var foo = allocator.New<IFooData>();
        foo.Bar = 17;
        foo.Tar = 3;
        string json = JsonSerializer.Serialize<object>(foo);
        using var doc = JsonDocument.Parse(json);
        Assert.Equal(17, doc.RootElement.GetProperty("Bar").GetInt32());
        Assert.Equal(3, doc.RootElement.GetProperty("Tar").GetByte());
        Assert.False(doc.RootElement.TryGetProperty(nameof(NativeRecord.IsAllocated), out _));
        Assert.False(doc.RootElement.TryGetProperty(nameof(NativeRecord.RecordInterface), out _));
        Assert.False(doc.RootElement.TryGetProperty(nameof(NativeRecord.Layout), out _));
        // As the interface, it serializes the same data.
        Assert.Equal(17, JsonDocument.Parse(JsonSerializer.Serialize(foo)).RootElement.GetProperty("Bar").GetInt32());
        allocator.Delete(foo);
    }

    [Fact]
    public void A_deleted_handle_serialized_as_object_throws_the_use_after_delete_error()
    {
        using var allocator = new TypeAllocator();
        var foo = allocator.New<IFooData>();
        allocator.Delete(foo);
        var e = Assert.ThrowsAny<Exception>(() => JsonSerializer.Serialize<object>(foo));
        Assert.IsType<InvalidOperationException>(e.InnerException ?? e);
    }
}
