using System.Numerics;
using System.Runtime.InteropServices;
using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

// Every shape the run-time path accepts, marked for the generator. LayoutParityTests compares each
// compiled layout with TypeLayout.Of's reflection-based one.

public enum Colour : byte { Red, Green }

public enum Big : long { Small, Huge = long.MaxValue }

[NativeRecord]
public interface IFooData
{
    int Count { get; set; }
    long Id { get; set; }
    double Value { get; set; }
    byte Flag { get; set; }
}

[NativeRecord]
public interface IPrimitives
{
    bool B { get; set; }
    char C { get; set; }
    sbyte S8 { get; set; }
    short S16 { get; set; }
    ushort U16 { get; set; }
    uint U32 { get; set; }
    ulong U64 { get; set; }
    float F { get; set; }
    nint N { get; set; }
    nuint UN { get; set; }
    Colour Colour { get; set; }
    Big Big { get; set; }
}

[NativeRecord]
public interface ISystemStructs
{
    decimal Money { get; set; }
    Guid Key { get; set; }
    DateTime When { get; set; }
    DateTimeOffset WhenOffset { get; set; }
    TimeSpan Span { get; set; }
    Int128 Wide { get; set; }
    UInt128 UWide { get; set; }
    Half Small { get; set; }
    DateOnly Day { get; set; }
    TimeOnly Time { get; set; }
    Vector3 Position { get; set; }
    Vector4 Colour4 { get; set; }
    int? MaybeInt { get; set; }
    long? MaybeLong { get; set; }
    byte? MaybeByte { get; set; }
}

public struct Point { public int X; public int Y; }

public struct Mixed { public byte A; public long B; public short C; }

[StructLayout(LayoutKind.Sequential, Pack = 2)]
public struct Packed { public byte A; public long B; }

[StructLayout(LayoutKind.Explicit)]
public struct Overlay { [FieldOffset(0)] public long All; [FieldOffset(4)] public int High; }

[StructLayout(LayoutKind.Sequential, Size = 24)]
public struct Sized { public int A; }

public unsafe struct WithFixed { public fixed short Items[5]; public byte Tail; }

public struct Nested { public Mixed Inner; public byte After; public Int128 Wide; }

public readonly record struct Pair(int Left, int Right);

public struct Empty { }

[NativeRecord]
public interface IUserStructs
{
    Point Point { get; set; }
    Mixed Mixed { get; set; }
    Packed Packed { get; set; }
    Overlay Overlay { get; set; }
    Sized Sized { get; set; }
    WithFixed Fixed { get; set; }
    Nested Nested { get; set; }
    Pair Pair { get; set; }
    Empty Nothing { get; set; }
}

[NativeRecord]
public interface IFixedOffsets
{
    [RecordOffset(16)] int At16 { get; set; }
    [RecordOffset(0)] byte At0 { get; set; }
    long Free { get; set; }
    short Gap { get; set; }
}

[NativeRecord]
public interface IContended
{
    long Cold { get; set; }
    [OwnCacheLine] long Hot { get; set; }
    int Other { get; set; }
}

[NativeRecord, CacheLineAligned]
public interface IAligned
{
    int Value { get; set; }
}

[NativeRecord]
public interface IEmptyRecord
{
}

public interface IReadOnlyView
{
    int Visible { get; }
}

/// <summary>A get-only base property is one field with the derived interface's settable one of the same name and type.</summary>
[NativeRecord]
public interface IReadOnlyParts : IReadOnlyView
{
    new int Visible { get; set; }
    long Both { get; set; }
}

public interface IBase
{
    int Shared { get; set; }
    long Same { get; set; }
}

public interface IOtherBase
{
    long Shared { get; set; }
    long Same { get; set; }
}

public interface IGenericBase<T> where T : unmanaged
{
    T Item { get; set; }
}

[NativeRecord]
public interface IDerived : IBase, IOtherBase, IGenericBase<short>
{
    byte Own { get; set; }
    new long Same { get; set; }
}

[NativeRecord]
public interface IReservedNames
{
    int Handle { get; set; }
    bool IsAllocated { get; set; }
    int Delete { get; set; }
}

public static class Outer
{
    [NativeRecord]
    public interface IInner
    {
        int A { get; set; }
        byte B { get; set; }
    }

    public static class Deeper
    {
        [NativeRecord]
        public interface IDeepest
        {
            short C { get; set; }
        }
    }
}

[NativeRecord]
public interface ILarge
{
    [RecordOffset(9000)] long Far { get; set; }
    int Near { get; set; }
}

/// <summary>A record of an unusual size (a size class the other tests here do not use), so the chunk-reuse tests have their chunks to themselves.</summary>
[NativeRecord]
public interface IReuseRecord
{
    long First { get; set; }
    Int128 A { get; set; }
    Int128 B { get; set; }
    Int128 C { get; set; }
    Int128 D { get; set; }
    Int128 E { get; set; }
    Int128 F { get; set; }
    Int128 G { get; set; }
    Int128 H { get; set; }
    Int128 I { get; set; }
    Int128 J { get; set; }
    Int128 K { get; set; }
    Int128 L { get; set; }
    Int128 M { get; set; }
    Int128 N { get; set; }
    Int128 O { get; set; }
    Int128 P { get; set; }
    Int128 Q { get; set; }
    Int128 R { get; set; }
    Int128 S { get; set; }
    long Last { get; set; }
}
