using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace Manaloc.Memory;

/// <summary>
/// The native layout <see cref="TypeAllocator"/> gives an interface: each property's offset, size and
/// alignment, the padding, and the record's size and alignment.
/// </summary>
/// <remarks>
/// <para>Rules: every field is naturally aligned; fields with <see cref="RecordOffsetAttribute"/> go
/// where they say; fields with <see cref="OwnCacheLineAttribute"/> get a cache line each; the rest are
/// placed largest alignment first into the lowest free offset, which leaves no padding between them
/// (every .NET value type's size is a multiple of its alignment). The record's alignment is its largest
/// field alignment (a cache line with <see cref="CacheLineAlignedAttribute"/> or an own-line field) and
/// its size is rounded up to it, so records in an array stay aligned.</para>
/// <para>Compare the article's <c>IFooData</c> (int, long, double, byte): it summed
/// <c>Marshal.SizeOf</c> in declaration order into 21 bytes with the long and double misaligned; here it
/// is long @0, double @8, int @16, byte @20 in a 24-byte, 8-aligned record.</para>
/// <para>Thread safety: immutable; <see cref="Of(Type)"/> is safe from any thread and computes each layout once.</para>
/// </remarks>
public sealed partial class TypeLayout
{
    /// <summary>Cache line size assumed by the layout attributes (64 bytes: x64 and most ARM64 cores).</summary>
    public const int CacheLineSize = 64;

    private static readonly ConcurrentDictionary<Type, TypeLayout> s_cache = new();

    private TypeLayout(Type type, int size, int alignment, IReadOnlyList<FieldLayout> fields)
    {
        Type = type;
        Size = size;
        Alignment = alignment;
        Fields = fields;
    }

    /// <summary>The interface laid out.</summary>
    public Type Type { get; }
    /// <summary>Bytes of one record, a multiple of <see cref="Alignment"/>.</summary>
    public int Size { get; }
    /// <summary>Alignment of the record.</summary>
    public int Alignment { get; }
    /// <summary>Fields by increasing offset.</summary>
    public IReadOnlyList<FieldLayout> Fields { get; }
    /// <summary>Bytes of the record not occupied by any field (between fields and at the end).</summary>
    public int Padding => Size - Fields.Sum(f => f.Size);

    /// <summary>The layout of interface <paramref name="type"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
    /// <exception cref="ArgumentException">The type cannot be a record; the message names the type, the member and the reason.</exception>
    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    public static TypeLayout Of(Type type)
    {
        ArgumentNullException.ThrowIfNull(type);
        if (s_cache.TryGetValue(type, out var layout)) return layout;
        layout = Compute(type);
        return s_cache.GetOrAdd(type, layout);
    }

    /// <summary>The layout of interface <typeparamref name="T"/>.</summary>
    /// <exception cref="ArgumentException">The type cannot be a record.</exception>
    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    public static TypeLayout Of<T>() where T : class => Of(typeof(T));

    /// <summary>One line per field, then size, alignment and padding.</summary>
    public override string ToString()
    {
        var sb = new StringBuilder();
        sb.Append(Type.Name).Append(": ").Append(Size).Append(" bytes, align ").Append(Alignment).Append(", padding ").Append(Padding).AppendLine();
        foreach (var f in Fields) sb.Append("  ").AppendLine(f.ToString());
        return sb.ToString();
    }
}
