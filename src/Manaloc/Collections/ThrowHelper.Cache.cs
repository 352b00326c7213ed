using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>Throwing for the native cache lives here, so its reads and writes stay small enough to inline.</summary>
internal static partial class ThrowHelper
{
    [DoesNotReturn]
    public static void ThrowWriterSpanTooSmall(string what, int length, int sizeHint, Type writer)
        => throw new ArgumentException($"{what}: the destination writer ({writer.Name}) returned a span of {length} bytes from GetSpan({sizeHint}), "
            + "so the value cannot be copied into it. IBufferWriter<byte>.GetSpan must return at least sizeHint bytes (or throw if it cannot).", "destination");
}
