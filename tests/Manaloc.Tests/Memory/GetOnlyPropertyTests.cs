using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public interface IGetOnlyCount
{
    int Count { get; }
    long Total { get; set; }
}

public interface IGetOnlyBase
{
    int Id { get; }
}

public interface IGetOnlyInherited : IGetOnlyBase
{
    long Total { get; set; }
}

/// <summary>
/// A property no declaration can write would read zero forever: the run-time path refuses it on first use, with the member
/// named, as the generator does (MNL015). A get-only declaration beside a settable one of the same field stays accepted.
/// </summary>
public sealed class GetOnlyPropertyTests
{
    [Theory]
    [InlineData(typeof(IGetOnlyCount), "IGetOnlyCount.Count")]
    [InlineData(typeof(IGetOnlyInherited), "IGetOnlyBase.Id")]
    public void A_field_without_any_setter_is_refused_by_New_and_GetLayout(Type type, string member)
    {
        using var allocator = new TypeAllocator();
        var e = Assert.Throws<ArgumentException>(() => allocator.GetLayout(type));
        Assert.Contains($"member '{member}'", e.Message);
        Assert.Contains("only a getter, so nothing could ever write it and it would always read zero; add a set accessor", e.Message);
        Assert.Contains(type.Name, e.Message);
        Assert.Throws<ArgumentException>(() => allocator.PreGenerate(type));
    }

    [Fact]
    public void New_of_a_get_only_record_throws_rather_than_returning_a_record_that_reads_zero()
    {
        using var allocator = new TypeAllocator();
        var e = Assert.Throws<ArgumentException>(() => allocator.New<IGetOnlyCount>());
        Assert.Contains("IGetOnlyCount.Count", e.Message);
    }

    [Fact]
    public void A_get_only_declaration_beside_a_settable_one_shares_its_field()
    {
        using var allocator = new TypeAllocator();
        var record = allocator.New<IReadWriteX>();
        record.X = 42;
        Assert.Equal(42, ((IReadX)record).X);
        allocator.Delete(record);
    }
}
