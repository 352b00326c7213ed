using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class DeepReferenceTests
{
    public struct Deep0 { public Deep1 Next; }
    public struct Deep1 { public Deep2 Next; }
    public struct Deep2 { public Deep3 Next; }
    public struct Deep3 { public Deep4 Next; }
    public struct Deep4 { public Deep5 Next; }
    public struct Deep5 { public Deep6 Next; }
    public struct Deep6 { public Deep7 Next; }
    public struct Deep7 { public Deep8 Next; }
    public struct Deep8 { public Deep9 Next; }
    public struct Deep9 { public Deep10 Next; }
    public struct Deep10 { public Deep11 Next; }
    public struct Deep11 { public Deep12 Next; }
    public struct Deep12 { public Deep13 Next; }
    public struct Deep13 { public Deep14 Next; }
    public struct Deep14 { public Deep15 Next; }
    public struct Deep15 { public Deep16 Next; }
    public struct Deep16 { public Deep17 Next; }
    public struct Deep17 { public Deep18 Next; }
    public struct Deep18 { public Deep19 Next; }
    public struct Deep19 { public Deep20 Next; }
    public struct Deep20 { public Deep21 Next; }
    public struct Deep21 { public Deep22 Next; }
    public struct Deep22 { public Deep23 Next; }
    public struct Deep23 { public Deep24 Next; }
    public struct Deep24 { public Deep25 Next; }
    public struct Deep25 { public Deep26 Next; }
    public struct Deep26 { public Deep27 Next; }
    public struct Deep27 { public Deep28 Next; }
    public struct Deep28 { public Deep29 Next; }
    public struct Deep29 { public Deep30 Next; }
    public struct Deep30 { public Deep31 Next; }
    public struct Deep31 { public Deep32 Next; }
    public struct Deep32 { public Deep33 Next; }
    public struct Deep33 { public object? Reference; }
    public struct Plain0 { public Plain1 Next; }
    public struct Plain1 { public Plain2 Next; }
    public struct Plain2 { public Plain3 Next; }
    public struct Plain3 { public Plain4 Next; }
    public struct Plain4 { public Plain5 Next; }
    public struct Plain5 { public Plain6 Next; }
    public struct Plain6 { public Plain7 Next; }
    public struct Plain7 { public Plain8 Next; }
    public struct Plain8 { public Plain9 Next; }
    public struct Plain9 { public Plain10 Next; }
    public struct Plain10 { public Plain11 Next; }
    public struct Plain11 { public Plain12 Next; }
    public struct Plain12 { public Plain13 Next; }
    public struct Plain13 { public Plain14 Next; }
    public struct Plain14 { public Plain15 Next; }
    public struct Plain15 { public Plain16 Next; }
    public struct Plain16 { public Plain17 Next; }
    public struct Plain17 { public Plain18 Next; }
    public struct Plain18 { public Plain19 Next; }
    public struct Plain19 { public Plain20 Next; }
    public struct Plain20 { public Plain21 Next; }
    public struct Plain21 { public Plain22 Next; }
    public struct Plain22 { public Plain23 Next; }
    public struct Plain23 { public Plain24 Next; }
    public struct Plain24 { public Plain25 Next; }
    public struct Plain25 { public Plain26 Next; }
    public struct Plain26 { public Plain27 Next; }
    public struct Plain27 { public Plain28 Next; }
    public struct Plain28 { public Plain29 Next; }
    public struct Plain29 { public Plain30 Next; }
    public struct Plain30 { public Plain31 Next; }
    public struct Plain31 { public Plain32 Next; }
    public struct Plain32 { public Plain33 Next; }
    public struct Plain33 { public long Value; }

    public interface IDeepReference { Deep0 Value { get; set; } }

    public interface IDeepPlain { Plain0 Value { get; set; } }

    [Fact]
    public void A_reference_nested_34_structs_deep_is_rejected()
    {
        var error = Assert.Throws<ArgumentException>(() => TypeLayout.Of(typeof(IDeepReference)));
        Assert.Contains("member 'DeepReferenceTests.IDeepReference.Value'", error.Message);
        Assert.Contains("contains a reference", error.Message);
        using var allocator = new TypeAllocator();
        Assert.Throws<ArgumentException>(() => allocator.New<IDeepReference>());
    }

    [Fact]
    public void A_struct_nested_34_deep_without_references_is_accepted()
    {
        var layout = TypeLayout.Of(typeof(IDeepPlain));
        Assert.Equal(8, layout.Size);
        using var allocator = new TypeAllocator();
        var record = allocator.New<IDeepPlain>();
        var value = record.Value;
        Assert.Equal(0L, value.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Next.Value);
        allocator.Delete(record);
    }
}
