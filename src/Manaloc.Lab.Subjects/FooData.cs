using System.Runtime.InteropServices;

namespace Manaloc.Lab.Subjects;

// The article's record ("Writing a Manual Memory Manager in C#") and its two managed anchors. The lab's
// typed-memory experiment and the benchmarks both reference this library, so both measure the same types.

/// <summary>The article's record interface: a 21-byte record when packed, 24 aligned. Marked for the source generator,
/// which makes the struct handles <c>FooDataRef</c> and <c>FooDataUncheckedRef</c>.</summary>
[Manaloc.Memory.NativeRecord]
public interface IFooData
{
    /// <summary>An int.</summary>
    int Bar { get; set; }
    /// <summary>A long.</summary>
    long Jar { get; set; }
    /// <summary>A double.</summary>
    double Car { get; set; }
    /// <summary>A byte.</summary>
    byte Tar { get; set; }
}

/// <summary>The anchor: an ordinary class on the managed heap.</summary>
public sealed class ManagedFoo : IFooData
{
    /// <inheritdoc/>
    public int Bar { get; set; }
    /// <inheritdoc/>
    public long Jar { get; set; }
    /// <inheritdoc/>
    public double Car { get; set; }
    /// <inheritdoc/>
    public byte Tar { get; set; }
}

/// <summary>The article's hand-written implementation: AllocHGlobal(21) per object, fields at 0/4/12/20 (long and double misaligned).</summary>
public sealed unsafe class ArticleFoo : IFooData
{
    private byte* _native = (byte*)Marshal.AllocHGlobal(21);

    /// <inheritdoc/>
    public int Bar { get => *(int*)_native; set => *(int*)_native = value; }
    /// <inheritdoc/>
    public long Jar { get => *(long*)(_native + 4); set => *(long*)(_native + 4) = value; }
    /// <inheritdoc/>
    public double Car { get => *(double*)(_native + 12); set => *(double*)(_native + 12) = value; }
    /// <inheritdoc/>
    public byte Tar { get => _native[20]; set => _native[20] = value; }

    /// <summary>Frees the native block (the article's Delete).</summary>
    public void Delete()
    {
        Marshal.FreeHGlobal((nint)_native);
        _native = null;
    }
}
