using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class TypeLayoutTests
{
    public static TheoryData<Type> ValidTypes() => new()
    {
        typeof(IFooData), typeof(IAllTypes), typeof(IReadWriteX), typeof(IDiamond), typeof(Outer.INested), typeof(IBox<decimal>),
        typeof(IHotCold), typeof(ILineAligned), typeof(IFixed), typeof(IEmpty), typeof(IBig), typeof(ILarge),
    };

    [Theory]
    [MemberData(nameof(ValidTypes))]
    public void Fields_are_aligned_do_not_overlap_and_fit_the_size(Type type)
    {
        var layout = TypeLayout.Of(type);
        Assert.True(layout.Alignment >= 1 && (layout.Alignment & (layout.Alignment - 1)) == 0);
        Assert.Equal(0, layout.Size % layout.Alignment);
        var fields = layout.Fields.OrderBy(f => f.Offset).ToArray();
        for (int i = 0; i < fields.Length; i++)
        {
            Assert.Equal(0, fields[i].Offset % fields[i].Alignment);
            Assert.True(fields[i].Alignment <= layout.Alignment);
            Assert.True(fields[i].Offset + fields[i].Size <= layout.Size);
            if (i > 0) Assert.True(fields[i - 1].Offset + fields[i - 1].Size <= fields[i].Offset, $"{fields[i - 1].Name} overlaps {fields[i].Name}");
        }
        Assert.Equal(layout.Size - fields.Sum(f => f.Size), layout.Padding);
    }

    [Fact]
    public void IFooData_is_24_aligned_bytes_where_the_article_had_21_misaligned_ones()
    {
        var layout = TypeLayout.Of<IFooData>();
        Assert.Equal(24, layout.Size);
        Assert.Equal(8, layout.Alignment);
        Assert.Equal(3, layout.Padding);
        Assert.Equal(["Jar", "Car", "Bar", "Tar"], layout.Fields.Select(f => f.Name));
        Assert.Equal([0, 8, 16, 20], layout.Fields.Select(f => f.Offset));
    }

    [Fact]
    public void Sizes_are_the_runtime_sizes_not_Marshal_SizeOf()
    {
        var layout = TypeLayout.Of<IAllTypes>();
        FieldLayout F(string n) => layout.Fields.Single(f => f.Name == n);
        Assert.Equal(1, F("Flag").Size);     // Marshal.SizeOf(bool) is 4
        Assert.Equal(2, F("Letter").Size);   // Marshal.SizeOf(char) is 1
        Assert.Equal(16, F("Money").Size);
        Assert.Equal(16, F("I128").Size);
        Assert.Equal(16, F("I128").Alignment);
        Assert.Equal(16, F("WhenOffset").Size);
        Assert.Equal(System.Runtime.CompilerServices.Unsafe.SizeOf<Mixed>(), F("Mix").Size);
        Assert.Equal(8, F("Mix").Alignment);
        Assert.Equal(4, F("Id").Alignment);
        Assert.Equal(0, layout.Size % 16);
    }

    [Fact]
    public void Attributes_fix_offsets_and_isolate_hot_fields()
    {
        var fixedLayout = TypeLayout.Of<IFixed>();
        Assert.Equal(16, fixedLayout.Fields.Single(f => f.Name == "At16").Offset);

        var hot = TypeLayout.Of<IHotCold>();
        var hotField = hot.Fields.Single(f => f.Name == "Hot");
        Assert.Equal(0, hotField.Offset % TypeLayout.CacheLineSize);
        Assert.Equal(TypeLayout.CacheLineSize, hot.Alignment);
        Assert.All(hot.Fields.Where(f => f.Name != "Hot"), f => Assert.NotEqual(hotField.Offset / 64, f.Offset / 64));

        var aligned = TypeLayout.Of<ILineAligned>();
        Assert.Equal(64, aligned.Alignment);
        Assert.Equal(64, aligned.Size);
    }

    [Fact]
    public void Same_name_and_type_share_a_field_different_types_do_not()
    {
        var layout = TypeLayout.Of<IDiamond>();
        Assert.Single(layout.Fields, f => f.Name == "Count");
        Assert.Equal(2, layout.Fields.Count(f => f.Name.EndsWith("Size", StringComparison.Ordinal)));
        Assert.Single(TypeLayout.Of<IReadWriteX>().Fields);
    }

    public static TheoryData<Type, string> InvalidTypes() => new()
    {
        { typeof(NotAnInterface), "class" },
        { typeof(StructType), "struct" },
        { typeof(IInternal), "not public" },
        { typeof(IWithMethod), "DoIt" },
        { typeof(IWithEvent), "Changed" },
        { typeof(IWithIndexer), "indexer" },
        { typeof(IWithString), "Name" },
        { typeof(IWithReferenceStruct), "reference" },
        { typeof(IWithDefault), "default implementation" },
        { typeof(IBox<>), "open generic" },
        { typeof(IBadOffset), "RecordOffset(3)" },
    };

    [Theory]
    [MemberData(nameof(InvalidTypes))]
    public void Invalid_types_fail_naming_type_member_and_reason(Type type, string expected)
    {
        var e = Assert.Throws<ArgumentException>(() => TypeLayout.Of(type));
        Assert.Contains(type.Name.Split('`')[0], e.Message, StringComparison.Ordinal);
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
    }
}
