using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;

namespace Manaloc.Memory.Records.Tests;

/// <summary>A compiled record's class is generated and implements its interface explicitly: System.Text.Json must still
/// write its data, as its interface, whatever the declared type, and refuse a dead record instead of writing <c>{}</c>.</summary>
public sealed class RecordJsonTests
{
    private const string Expected = """{"Count":3,"Id":42,"Value":2.5,"Flag":7}""";

    private static void Fill(IFooData r)
    {
        r.Count = 3;
        r.Id = 42;
        r.Value = 2.5;
        r.Flag = 7;
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_record_from_New_writes_its_data_as_its_interface_and_as_object(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var record = allocator.New<IFooData>();
        Fill(record);
        Assert.Equal(Expected, JsonSerializer.Serialize(record));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)record));
        Assert.Equal("[" + Expected + "]", JsonSerializer.Serialize<object[]>([record]));
        allocator.Delete(record);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void An_array_item_and_a_view_write_their_records_data_as_object(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var array = allocator.NewArray<IFooData>(3);
        Fill(array.MoveTo(1));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)array[1]));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)array.MoveTo(1)));
        Assert.Equal(Expected, JsonSerializer.Serialize<object>(array.CreateView().MoveTo(1)));
        Assert.Equal("""{"Count":0,"Id":0,"Value":0,"Flag":0}""", JsonSerializer.Serialize((object)array[0]));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void An_item_of_a_disposed_array_throws_instead_of_writing(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var array = allocator.NewArray<IFooData>(2);
        var item = array[1];
        var view = array.MoveTo(1);
        array.Dispose();
        var e = Assert.Throws<ObjectDisposedException>(() => JsonSerializer.Serialize((object)item));
        Assert.Contains("RecordArray<IFooData>", e.Message);
        Assert.Throws<ObjectDisposedException>(() => JsonSerializer.Serialize((object)view));
        // As the interface, the contract calls the record's own getters: a checked item checks each, an unchecked one is bare.
        if (isChecked) Assert.Throws<ObjectDisposedException>(() => JsonSerializer.Serialize<IFooData>(item));
    }

    [Fact]
    public void A_deleted_record_throws_and_one_of_a_disposed_allocator_names_it()
    {
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "catalog" });
        var deleted = allocator.New<IFooData>();
        allocator.Delete(deleted);
        Assert.Throws<InvalidOperationException>(() => JsonSerializer.Serialize((object)deleted));
        var live = allocator.New<IFooData>();
        allocator.Dispose();
        var e = Assert.Throws<ObjectDisposedException>(() => JsonSerializer.Serialize((object)live));
        Assert.Contains("catalog", e.Message);
    }

    [Fact]
    public void A_record_cannot_be_read_back_and_says_why()
    {
        var e = Assert.Throws<NotSupportedException>(() => JsonSerializer.Deserialize<NativeRecord>(Expected));
        Assert.Contains("TypeAllocator", e.Message);
        var options = new JsonSerializerOptions { TypeInfoResolver = JsonTypeInfoResolver.Combine(RecordJsonContext.Default, NativeRecordJson.TypeInfoResolver) };
        Assert.Throws<NotSupportedException>(() => JsonSerializer.Deserialize<NativeRecord>(Expected, options));
    }

    [Fact]
    public void Under_a_source_generated_context_a_record_as_object_writes_its_data()
    {
        var options = new JsonSerializerOptions
        {
            TypeInfoResolver = JsonTypeInfoResolver.Combine(RecordJsonContext.Default, NativeRecordJson.TypeInfoResolver),
        };
        using var allocator = new TypeAllocator();
        var record = allocator.New<IFooData>();
        Fill(record);
        using var array = allocator.NewArray<IFooData>(2);
        Fill(array[0]);
        Assert.Equal(Expected, JsonSerializer.Serialize((object)record, options));
        Assert.Equal(Expected, JsonSerializer.Serialize(record, RecordJsonContext.Default.IFooData));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)array[0], options));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)array.MoveTo(0), options));
        Assert.Equal(Expected, JsonSerializer.Serialize<NativeRecord>((NativeRecord)(object)record, options));
        var item = array[0];
        array.Dispose();
        Assert.Throws<ObjectDisposedException>(() => JsonSerializer.Serialize((object)item, options));
        allocator.Delete(record);
    }

    [Fact]
    public void Under_a_source_generated_context_a_record_interface_it_does_not_list_is_a_clear_error()
    {
        var options = new JsonSerializerOptions { TypeInfoResolver = JsonTypeInfoResolver.Combine(RecordJsonContext.Default, NativeRecordJson.TypeInfoResolver) };
        using var allocator = new TypeAllocator();
        var other = allocator.New<IPrimitives>();
        var e = Assert.Throws<NotSupportedException>(() => JsonSerializer.Serialize((object)other, options));
        Assert.Contains("IPrimitives", e.Message);
        allocator.Delete(other);
    }
}

[JsonSerializable(typeof(IFooData))]
[JsonSerializable(typeof(object))]
internal sealed partial class RecordJsonContext : JsonSerializerContext;
