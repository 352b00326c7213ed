using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>The generator's layouts equal the run-time TypeLayout.Of for every accepted shape.</summary>
public class LayoutParityTests
{
    public static TheoryData<string> Shapes() => new(s_shapes.Keys);

    private static readonly Dictionary<string, (CompiledRecordType Compiled, Type Interface)> s_shapes = new()
    {
        ["mixed alignment"] = (FooDataRef.RecordType, typeof(IFooData)),
        ["primitives and enums"] = (PrimitivesRef.RecordType, typeof(IPrimitives)),
        ["System structs and nullables"] = (SystemStructsRef.RecordType, typeof(ISystemStructs)),
        ["user structs: sequential, Pack, explicit, Size, fixed, nested, empty"] = (UserStructsRef.RecordType, typeof(IUserStructs)),
        ["[RecordOffset]"] = (FixedOffsetsRef.RecordType, typeof(IFixedOffsets)),
        ["[OwnCacheLine]"] = (ContendedRef.RecordType, typeof(IContended)),
        ["[CacheLineAligned]"] = (AlignedRef.RecordType, typeof(IAligned)),
        ["no properties"] = (EmptyRecordRef.RecordType, typeof(IEmptyRecord)),
        ["get-only base property, settable in the derived interface"] = (ReadOnlyPartsRef.RecordType, typeof(IReadOnlyParts)),
        ["inherited, shared and same-name properties, closed generic base"] = (DerivedRef.RecordType, typeof(IDerived)),
        ["names of the handle's own members"] = (ReservedNamesRef.RecordType, typeof(IReservedNames)),
        ["an unusual size class"] = (ReuseRecordRef.RecordType, typeof(IReuseRecord)),
        ["used by a module initializer"] = (EarlyRecordRef.RecordType, typeof(IEarlyRecord)),
        ["a default handle used by a module initializer"] = (EarlyDefaultRef.RecordType, typeof(IEarlyDefault)),
        ["a default handle's accessor used by a module initializer"] = (EarlyAccessorRef.RecordType, typeof(IEarlyAccessor)),
        ["nested public interface"] = (OuterInnerRef.RecordType, typeof(Outer.IInner)),
        ["doubly nested public interface"] = (OuterDeeperDeepestRef.RecordType, typeof(Outer.Deeper.IDeepest)),
        ["larger than a slab class"] = (LargeRef.RecordType, typeof(ILarge)),
    };

    [Theory]
    [MemberData(nameof(Shapes))]
    public void Compiled_layout_equals_the_run_time_layout(string shape)
    {
        var (compiled, iface) = s_shapes[shape];
        var runtime = TypeLayout.Of(iface);
        var generated = compiled.Layout;

        Assert.Equal(iface, compiled.Interface);
        Assert.Equal(runtime.Size, generated.Size);
        Assert.Equal(runtime.Alignment, generated.Alignment);
        Assert.Equal(Describe(runtime), Describe(generated));
    }

    [Theory]
    [MemberData(nameof(Shapes))]
    // The compiled checked class compares the stamp at the offset CompiledRecords.StampOffsetOf gives it: if that offset
    // were not where the allocator keeps the stamp, the first read would throw, or the read after Delete would pass.
    public void The_compiled_checked_class_finds_the_stamp_of_every_shape(string shape)
    {
        var (_, iface) = s_shapes[shape];
        var property = iface.GetProperties().FirstOrDefault(p => p.GetMethod is not null)
            ?? iface.GetInterfaces().SelectMany(i => i.GetProperties()).FirstOrDefault(p => p.GetMethod is not null);
        if (property is null) return; // no field to read ("no properties")
        using var allocator = new TypeAllocator();
        object handle = typeof(TypeAllocator).GetMethod(nameof(TypeAllocator.New))!.MakeGenericMethod(iface).Invoke(allocator, null)!;
        Assert.Equal(Activator.CreateInstance(property.PropertyType) ?? 0, property.GetValue(handle) ?? 0); // zeroed, and the check passed
        typeof(TypeAllocator).GetMethod(nameof(TypeAllocator.Delete))!.MakeGenericMethod(iface).Invoke(allocator, [handle]);
        var error = Assert.Throws<System.Reflection.TargetInvocationException>(() => property.GetValue(handle));
        Assert.IsType<InvalidOperationException>(error.InnerException);
    }

    [Fact]
    public void Every_marked_interface_in_this_assembly_is_compared()
    {
        var marked = typeof(LayoutParityTests).Assembly.GetTypes().Where(t => t.IsDefined(typeof(NativeRecordAttribute), false)).ToHashSet();
        Assert.Equal(marked.OrderBy(t => t.FullName), s_shapes.Values.Select(s => s.Interface).OrderBy(t => t.FullName));
    }

    [Fact]
    public void The_documented_example_is_laid_out_as_documented()
    {
        // docs/memory.md: long @0, double @8, int @16, byte @20 in a 24-byte, 8-aligned record.
        Assert.Equal("Id:Int64@0+8/8 Value:Double@8+8/8 Count:Int32@16+4/4 Flag:Byte@20+1/1", Describe(FooDataRef.RecordType.Layout));
        Assert.Equal((24, 8), (FooDataRef.RecordType.Layout.Size, FooDataRef.RecordType.Layout.Alignment));
    }

    private static string Describe(TypeLayout layout)
        => string.Join(" ", layout.Fields.Select(f => $"{f.Name}:{f.Type.Name}@{f.Offset}+{f.Size}/{f.Alignment}"));
}
