using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>Records of interfaces not marked [NativeRecord] (classes emitted at run time) with System.Text.Json: written as
/// their interface whatever the declared type; a dead record throws instead of being written.</summary>
public sealed class RecordJsonTests
{
    private const string Expected = """{"Bar":3,"Jar":42,"Car":2.5,"Tar":7}""";

    private static void Fill(IFooData r)
    {
        r.Bar = 3;
        r.Jar = 42;
        r.Car = 2.5;
        r.Tar = 7;
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_handle_an_item_and_a_view_write_their_data_as_object(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var record = allocator.New<IFooData>();
        Fill(record);
        using var array = allocator.NewArray<IFooData>(2);
        Fill(array[1]);
        Assert.Equal(Expected, JsonSerializer.Serialize(record));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)record));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)array[1]));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)array.MoveTo(1)));
        allocator.Delete(record);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_record_of_a_disposed_array_or_a_deleted_record_throws_instead_of_writing(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var array = allocator.NewArray<IFooData>(2);
        var item = array[0];
        var view = array.MoveTo(0);
        array.Dispose();
        Assert.Throws<ObjectDisposedException>(() => JsonSerializer.Serialize((object)item));
        Assert.Throws<ObjectDisposedException>(() => JsonSerializer.Serialize((object)view));
        var deleted = allocator.New<IFooData>();
        allocator.Delete(deleted);
        Assert.Throws<InvalidOperationException>(() => JsonSerializer.Serialize((object)deleted));
    }

    [Fact]
    public void The_resolver_gives_an_emitted_class_its_contract()
    {
        var options = new JsonSerializerOptions { TypeInfoResolver = JsonTypeInfoResolver.Combine(NativeRecordJson.TypeInfoResolver, new DefaultJsonTypeInfoResolver()) };
        using var allocator = new TypeAllocator();
        var record = allocator.New<IFooData>();
        Fill(record);
        var contract = NativeRecordJson.TypeInfoResolver.GetTypeInfo(record.GetType(), options);
        Assert.NotNull(contract);
        Assert.Equal(record.GetType(), contract.Type);
        Assert.Null(NativeRecordJson.TypeInfoResolver.GetTypeInfo(typeof(string), options));
        Assert.Equal(Expected, JsonSerializer.Serialize((object)record, options));
        allocator.Delete(record);
    }
}
