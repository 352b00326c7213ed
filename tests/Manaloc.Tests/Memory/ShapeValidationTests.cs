using System.Reflection;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

// Shapes an outside test found accepted and then failing with TypeLoadException or ArgumentOutOfRangeException.

public interface IWithInit
{
    int Value { get; init; }
}

public interface IWithInternalMember
{
    int Value { get; set; }
    internal int Hidden { get; set; }
}

internal struct InternalPoint
{
    public int X { get; set; }
}

public class Holder<T>
{
    public interface IInner
    {
        int Value { get; set; }
    }
}

public interface IWithMethodOnGeneric : IBox<long>
{
    void Reset();
}

public sealed class ShapeValidationTests
{
    [Fact]
    public void An_init_accessor_is_refused_with_an_ArgumentException_naming_it()
    {
        var e = Assert.Throws<ArgumentException>(() => TypeLayout.Of<IWithInit>());
        Assert.Contains("IWithInit.Value", e.Message, StringComparison.Ordinal);
        Assert.Contains("init", e.Message, StringComparison.Ordinal);
        using var allocator = new TypeAllocator();
        Assert.Throws<ArgumentException>(() => allocator.New<IWithInit>());
    }

    [Fact]
    public void An_internal_member_is_refused_with_an_ArgumentException_naming_it()
    {
        using var allocator = new TypeAllocator();
        var e = Assert.Throws<ArgumentException>(() => allocator.New<IWithInternalMember>());
        Assert.Contains("IWithInternalMember.Hidden", e.Message, StringComparison.Ordinal);
        Assert.Contains("not public", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_generic_argument_that_is_an_internal_type_is_refused_with_an_ArgumentException_naming_it()
    {
        using var allocator = new TypeAllocator();
        var e = Assert.Throws<ArgumentException>(() => allocator.New<IBox<InternalPoint>>());
        Assert.Contains("InternalPoint", e.Message, StringComparison.Ordinal);
        Assert.Contains("not public", e.Message, StringComparison.Ordinal);
        Assert.Contains("IBox<Manaloc.Tests.Memory.InternalPoint>", e.Message, StringComparison.Ordinal); // C#-style, not IBox`1
    }

    [Fact]
    public void A_public_generic_argument_works()
    {
        using var allocator = new TypeAllocator();
        var box = allocator.New<IBox<Point3>>();
        box.Value = new Point3 { X = 1, Y = 2, Z = 3 };
        Assert.Equal(3, box.Value.Z);
        allocator.Delete(box);
    }

    [Fact]
    public void An_event_is_refused_with_a_message_about_events()
    {
        var e = Assert.Throws<ArgumentException>(() => TypeLayout.Of<IWithEvent>());
        Assert.Contains("IWithEvent.Changed", e.Message, StringComparison.Ordinal);
        Assert.Contains("events are not supported", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("methods", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_method_on_an_interface_deriving_a_generic_one_is_named_in_csharp_style()
    {
        var e = Assert.Throws<ArgumentException>(() => TypeLayout.Of<IWithMethodOnGeneric>());
        Assert.Contains("IWithMethodOnGeneric.Reset", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("`", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_public_interface_nested_in_a_public_generic_class_works_and_is_named_in_csharp_style()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { CaptureAllocationStacks = false });
        var inner = allocator.New<Holder<int>.IInner>();
        inner.Value = 42;
        Assert.Equal(42, inner.Value);
        Assert.StartsWith("Holder<int>.IInner record", inner.ToString(), StringComparison.Ordinal);
        Assert.Equal("Holder<int>.IInner", allocator.GetLiveObjects().Entries.Single().TypeName);
        using var array = allocator.NewArray<Holder<long>.IInner>(3);
        array.MoveTo(2).Value = 5;
        Assert.Equal(5, array.MoveTo(2).Value);
        allocator.Delete(inner);
        var e = Assert.Throws<InvalidOperationException>(() => inner.Value);
        Assert.Contains("Holder<int>.IInner", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Generated_type_and_property_names_carry_no_metadata_arity_marks()
    {
        using var allocator = new TypeAllocator();
        var inner = allocator.New<Holder<int>.IInner>();
        var generated = inner.GetType();
        Assert.DoesNotContain("`", generated.FullName!, StringComparison.Ordinal);
        Assert.All(generated.GetProperties(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic), p => Assert.DoesNotContain("`", p.Name, StringComparison.Ordinal));
        allocator.Delete(inner);
    }
}
