using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

// Record interfaces used by the Memory tests. They must be public: TypeAllocator implements only public interfaces.

public interface IFooData
{
    int Bar { get; set; }
    long Jar { get; set; }
    double Car { get; set; }
    byte Tar { get; set; }
}

public enum ByteEnum : byte { A = 1, B = 200 }
public enum ShortEnum : short { A = -3, B = 30000 }
public enum IntEnum { A = 7, B = int.MinValue }
public enum LongEnum : long { A = 1, B = long.MaxValue }
public enum ULongEnum : ulong { A = 1, B = ulong.MaxValue }

public struct Point3
{
    public int X;
    public int Y;
    public int Z;
}

public struct Mixed
{
    public byte Tag;
    public long Value;
    public Point3 Position;
}

public interface IAllTypes
{
    byte U8 { get; set; }
    sbyte I8 { get; set; }
    short I16 { get; set; }
    ushort U16 { get; set; }
    int I32 { get; set; }
    uint U32 { get; set; }
    long I64 { get; set; }
    ulong U64 { get; set; }
    float F32 { get; set; }
    double F64 { get; set; }
    Half F16 { get; set; }
    Int128 I128 { get; set; }
    UInt128 U128 { get; set; }
    bool Flag { get; set; }
    char Letter { get; set; }
    nint NInt { get; set; }
    nuint NUInt { get; set; }
    decimal Money { get; set; }
    Guid Id { get; set; }
    DateTime When { get; set; }
    DateTimeOffset WhenOffset { get; set; }
    TimeSpan Duration { get; set; }
    ByteEnum E8 { get; set; }
    ShortEnum E16 { get; set; }
    IntEnum E32 { get; set; }
    LongEnum E64 { get; set; }
    ULongEnum EU64 { get; set; }
    Point3 Point { get; set; }
    Mixed Mix { get; set; }
    int? MaybeInt { get; set; }
}

// Shapes: get-only and set-only declarations sharing storage with a get/set one of the same name and type.
public interface IReadX { int X { get; } }
public interface IWriteX { int X { set; } }
public interface IReadWriteX : IReadX, IWriteX { new int X { get; set; } }

// Two bases declaring the same name: same type shares, different type gets its own field.
public interface IBaseA { int Count { get; set; } long Size { get; set; } }
public interface IBaseB { int Count { get; set; } short Size { get; set; } }
public interface IDiamond : IBaseA, IBaseB { double Extra { get; set; } }

public static class Outer
{
    public interface INested { int Value { get; set; } }
}

public interface IBox<T> where T : unmanaged { T Value { get; set; } }

public interface IHotCold
{
    [OwnCacheLine] long Hot { get; set; }
    int Cold1 { get; set; }
    int Cold2 { get; set; }
}

[CacheLineAligned]
public interface ILineAligned { int A { get; set; } }

public interface IFixed
{
    [RecordOffset(16)] int At16 { get; set; }
    long Other { get; set; }
    byte Small { get; set; }
}

public interface IEmpty { }

public interface IBig
{
    Guid A { get; set; }
    Guid B { get; set; }
}

public struct Huge
{
    public decimal A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P;
}

public interface ILarge
{
    Huge H1 { get; set; }
    Huge H2 { get; set; }
    Huge H3 { get; set; }
    Huge H4 { get; set; }
    Huge H5 { get; set; }
    int Last { get; set; }
}

// Invalid shapes.
public class NotAnInterface { public int X { get; set; } }
public struct StructType { public int X { get; set; } }
internal interface IInternal { int X { get; set; } }
public interface IWithMethod { int X { get; set; } void DoIt(); }
public interface IWithEvent { int X { get; set; } event EventHandler Changed; }
public interface IWithIndexer { int this[int i] { get; set; } }
public interface IWithString { string Name { get; set; } }
public struct HasReference { public int A; public object B; }
public interface IWithReferenceStruct { HasReference Value { get; set; } }
public interface IWithDefault { int X { get => 1; } }
public interface IBadOffset { [RecordOffset(3)] int X { get; set; } }

/// <summary>40 × 256 B: a record larger than the largest size class (8 KB), so it gets a block of its own.</summary>
[System.Runtime.CompilerServices.InlineArray(40)]
public struct HugeRun
{
    private Huge _first;
}

public interface IVeryLarge
{
    HugeRun Run { get; set; }
    int Last { get; set; }
}
