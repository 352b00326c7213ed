using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Manaloc.Memory;

namespace Manaloc.Lab.Experiments;

// replaced by the generated FooDataRef once the generator lands
/// <summary>
/// A struct handle to one <see cref="Manaloc.Fixtures.IFooData"/> record in a <see cref="NativeSlabAllocator"/> block: the
/// record's address and the generation its slot had when handed out. 16 bytes, no managed reference, so an array
/// of them is one object the collector never scans: what a generated struct handle holds.
/// </summary>
/// <remarks>
/// <para>Accessors use the constant offsets <see cref="TypeLayout"/> computes for IFooData (Jar @0, Car @8, Bar @16,
/// Tar @20, 24 bytes; a test holds them equal) after comparing the slot's stamp with <see cref="_generation"/>.</para>
/// <para>Checked against use after <see cref="Delete"/> while the block's chunk lives: the stamp is found through the
/// chunk header, which this stand-in reads without asking whether the chunk was given back to the system. The
/// lab never uses a handle after its Delete; the generated handle has to settle that case itself.</para>
/// <para>All handles live in one process-wide allocator, never disposed, as a generated type's default heap would.</para>
/// </remarks>
[StructLayout(LayoutKind.Sequential)]
internal readonly unsafe struct LiveSetFooDataRef : Manaloc.Fixtures.IFooData
{
    /// <summary>Record size and alignment from TypeLayout.Of&lt;IFooData&gt;().</summary>
    internal const int Size = 24, Alignment = 8;
    internal const int JarOffset = 0, CarOffset = 8, BarOffset = 16, TarOffset = 20;

    private static readonly NativeSlabAllocator s_heap = new("live-set struct handles");
    private static readonly int s_class = SizeClassOf();

    private readonly byte* _address;
    private readonly uint _generation;
    private readonly uint _unused; // keeps the handle at 16 bytes on every platform, as the generated one is

    private LiveSetFooDataRef(byte* address, uint generation)
    {
        _address = address;
        _generation = generation;
        _unused = 0;
    }

    /// <summary>A zeroed record from the shared heap.</summary>
    public static LiveSetFooDataRef New()
    {
        byte* p = s_heap.AllocateStamped(s_class, Size, Alignment, out _, out uint generation);
        NativeMemory.Clear(p, Size);
        return new LiveSetFooDataRef(p, generation);
    }

    /// <summary>True until <see cref="Delete"/>; false for <c>default</c>.</summary>
    public bool IsAllocated => _address != null && *StampOf(_address) == _generation;

    /// <summary>Frees the record.</summary>
    /// <exception cref="InvalidOperationException">The handle is default or was already deleted.</exception>
    public void Delete()
    {
        if (_address == null) throw new InvalidOperationException("The FooData handle is default: it was never allocated.");
        if (!NativeSlabAllocator.TryReleaseStamp(ref *StampOf(_address), _generation))
        {
            throw new InvalidOperationException("The FooData handle was already deleted.");
        }
        s_heap.FreeStamped(_address, s_heap.ChunkOf(_address));
    }

    /// <inheritdoc/>
    public int Bar { get => *(int*)Checked(BarOffset); set => *(int*)Checked(BarOffset) = value; }
    /// <inheritdoc/>
    public long Jar { get => *(long*)Checked(JarOffset); set => *(long*)Checked(JarOffset) = value; }
    /// <inheritdoc/>
    public double Car { get => *(double*)Checked(CarOffset); set => *(double*)Checked(CarOffset) = value; }
    /// <inheritdoc/>
    public byte Tar { get => *Checked(TarOffset); set => *Checked(TarOffset) = value; }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* Checked(int offset)
    {
        if (_address == null || *StampOf(_address) != _generation) ThrowStale();
        return _address + offset;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint* StampOf(byte* address)
    {
        // The stamp sits in the block's own trailer (SlabChunk.StampOf), so no chunk lookup is needed for a class block.
        return (uint*)Unsafe.AsPointer(ref s_heap.ChunkOf(address).StampOf(address));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowStale() => throw new InvalidOperationException(_address == null
        ? "The FooData handle is default: it was never allocated."
        : "The FooData handle was used after Delete.");

    private static int SizeClassOf()
    {
        int cls = NativeSlabAllocator.StampedClass(Size, Alignment);
        if (cls < 0) throw new InvalidOperationException($"A {Size}-byte record has no size class.");
        return cls;
    }
}
