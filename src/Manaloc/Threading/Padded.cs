using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Manaloc.Threading;

/// <summary>
/// A value alone on its cache line: 128 bytes of padding before
/// and after it, so no other frequently written data shares the line (no false sharing).
/// </summary>
/// <typeparam name="T">The value's type.</typeparam>
/// <remarks>
/// <para>
/// Why: when two threads write two different variables that happen to share a cache line, every
/// write invalidates the other core's copy and the line ping-pongs between cores ("false
/// sharing"), so per-thread counters packed next to each other scale worse than one shared
/// counter.
/// </para>
/// <para>
/// Why 128 bytes and not 64: x86 cores fetch cache lines in adjacent pairs (the spatial, or
/// "adjacent-line", prefetcher pulls the 128-byte aligned buddy of a missed line) and Apple/ARM
/// cores such as the M-series have 128-byte lines; Intel's and Java's <c>@Contended</c> both pad
/// by 128. Padding on both sides means the value is isolated whatever the alignment of the
/// containing object or array, since a managed object is only guaranteed 8-byte alignment.
/// The price is memory: each <see cref="Padded{T}"/> is 256 bytes plus the value.
/// </para>
/// <para>
/// Use it for a field or an array element that one thread writes often while others touch its
/// neighbours: <c>Padded&lt;long&gt;[] perThread</c>, or a queue's head and tail. Access the value
/// through <see cref="Value"/> by reference (<c>ref counters[i].Value</c>) so writes go to the
/// padded storage, not a copy.
/// </para>
/// <para>
/// One caveat: for a <typeparamref name="T"/> that holds object references the runtime lays the
/// struct out automatically and puts the reference first, so the value leads its 256 bytes of
/// padding. Elements of a <c>Padded&lt;T&gt;[]</c> then still sit at least 256 bytes apart, which is
/// what matters for per-thread slots; for unmanaged values (counters, timestamps) the value is in
/// the middle, isolated on both sides.
/// </para>
/// <para>Thread safety: as a field's; synchronize access to <see cref="Value"/> as you would any field.</para>
/// </remarks>
[StructLayout(LayoutKind.Sequential)]
public struct Padded<T>
{
    private CacheLinePadding _before;

    private T _value;

    private CacheLinePadding _after;

    /// <summary>Creates a padded copy of <paramref name="value"/>.</summary>
    public Padded(T value)
    {
        _before = default;
        _value = value;
        _after = default;
    }

    /// <summary>The padded value, by reference: <c>counters[i].Value = 5</c>, <c>Interlocked.Increment(ref counters[i].Value)</c>
    /// and <see cref="Volatile"/> reach the padded storage itself, not a copy.</summary>
    /// <remarks>A reference into this struct: valid while the struct is (an array element, a field of a class).
    /// Thread safety: none of its own; synchronize as you would a field.</remarks>
    [UnscopedRef]
    public ref T Value => ref _value;

    /// <inheritdoc/>
    public override readonly string ToString() => _value?.ToString() ?? "";
}

/// <summary>128 bytes of nothing: the padding of <see cref="Padded{T}"/>.</summary>
/// <remarks>An inline array of sixteen longs, so it has the size and alignment of its contents on every runtime.</remarks>
[InlineArray(16)]
internal struct CacheLinePadding
{
    /// <summary>Bytes of padding on each side of a <see cref="Padded{T}"/> value.</summary>
    public const int Bytes = 128;

    private long _element;
}
