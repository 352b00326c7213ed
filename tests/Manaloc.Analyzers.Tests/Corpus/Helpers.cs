// Shared by every corpus file: stand-ins for the code a real method calls around its buffers.
using System.IO;
using System.Text;

namespace Corpus;

[NativeRecord]
public interface IPoint
{
    int X { get; set; }
    int Y { get; set; }
}

public sealed class Payload
{
    public int Value;
    public void Reset() => Value = 0;
}

public sealed class ArrayOwner : IDisposable
{
    private byte[]? _array;
    public ArrayOwner(byte[] array) => _array = array;
    public Span<byte> Span => _array;
    public void Dispose()
    {
        byte[]? array = Interlocked.Exchange(ref _array, null);
        if (array is not null) ArrayPool<byte>.Shared.Return(array);
    }
}

public static class Io
{
    public static int Read(Stream stream, byte[] buffer, int count) => stream.Read(buffer, 0, count);
    public static void Write(Stream stream, byte[] buffer, int count) => stream.Write(buffer, 0, count);
    public static void Fill(Span<byte> span) => span.Fill(1);
    public static int Sum(ReadOnlySpan<byte> span) { int s = 0; foreach (byte b in span) s += b; return s; }
    public static void Consume(object o) { }
    public static bool Check(int n) => n > 3;
    public static Task DelayAsync() => Task.Delay(1);
    public static void Keep(byte[] array) { }
    public static void Use(IPoint p) { }
}

public static class Text
{
    public static void Fill(PooledBufferWriter writer) => writer.Write("payload"u8);
    public static int Hash(ReadOnlySpan<byte> bytes) { var h = new HashCode(); h.AddBytes(bytes); return h.ToHashCode(); }
}
