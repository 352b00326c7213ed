// Correct methods in the shapes that drew false warnings on real code, and the right uses of pooled writers, callees that
// keep or release what they are given, and shared arrays read in concurrent code. None may be flagged (MNL111 included).
using System.Diagnostics;
using System.IO;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace Corpus;

public sealed class QuietCorrect
{
    private readonly BufferManager _buffers = new();
    private readonly RecordArray<IPoint> _points;
    private readonly TypeAllocator _allocator = new();

    public QuietCorrect(RecordArray<IPoint> points) => _points = points;

    // ------------------------------------------------------------------ returns outside finally that nothing can skip

    // expect: none
    public static string CopyThenDecode(ReadOnlySequence<byte> seq)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(checked((int)seq.Length));
        seq.CopyTo(a);
        string text = Encoding.UTF8.GetString(a, 0, (int)seq.Length);
        ArrayPool<byte>.Shared.Return(a);
        return text;
    }

    // expect: none
    public static int CopyThenHash(ReadOnlySpan<byte> source)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(source.Length);
        source.CopyTo(a);
        var hasher = new HashCode();
        hasher.AddBytes(a.AsSpan(0, source.Length));
        int hash = hasher.ToHashCode();
        ArrayPool<byte>.Shared.Return(a);
        return hash;
    }

    // expect: none
    public static bool CopyThenCompare(ReadOnlySequence<byte> seq, ReadOnlySpan<byte> expected)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(checked((int)seq.Length));
        seq.CopyTo(a);
        bool same = a.AsSpan(0, (int)seq.Length).SequenceEqual(expected);
        ArrayPool<byte>.Shared.Return(a);
        return same;
    }

    // expect: none
    public static int EncodeIntoMaxByteCount(string s)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(s.Length));
        int written = Encoding.UTF8.GetBytes(s, 0, s.Length, a, 0);
        int hash = HashCode.Combine(written, a[0]);
        ArrayPool<byte>.Shared.Return(a);
        return hash;
    }

    // expect: none
    public static string DecodeIntoMaxCharCount(ReadOnlySpan<byte> bytes)
    {
        char[] a = ArrayPool<char>.Shared.Rent(Encoding.UTF8.GetMaxCharCount(bytes.Length));
        int n = Encoding.UTF8.GetChars(bytes, a);
        string s = new string(a, 0, n);
        ArrayPool<char>.Shared.Return(a);
        return s;
    }

    // expect: none
    public static int CallsThatCannotThrow(object keep, ReadOnlySpan<byte> needle, int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        Debug.Assert(a.Length >= n);
        int at = a.AsSpan(0, n).IndexOf(needle);
        bool same = MemoryExtensions.SequenceEqual(a.AsSpan(0, n), needle);
        GC.KeepAlive(keep);
        ArrayPool<byte>.Shared.Return(a);
        return same ? at : Math.Max(at, 0);
    }

    // ------------------------------------------------------------------ callees that keep or release

    // expect: none
    public void ReleasedByCallee(int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        a[0] = 1;
        GiveBack(a);
    }

    private static void GiveBack(byte[] array) => ArrayPool<byte>.Shared.Return(array);

    // expect: none
    public void DisposedByCallee(int n)
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        b.Span.Clear();
        Finish(b);
    }

    private static void Finish(RentedBuffer buffer) => buffer.Dispose();

    // expect: none
    public ArrayOwner KeptByConstructor(int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        var owner = new ArrayOwner(a);
        owner.Span.Clear();
        return owner;
    }

    // expect: none
    public void KeptByCallee(int n, Stash stash)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        stash.Put(a);
    }

    // expect: none
    public int BorrowedThenReturned(Stream s, int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        try { return Io.Read(s, a, n); }
        finally { ArrayPool<byte>.Shared.Return(a); }
    }

    // ------------------------------------------------------------------ pooled writers

    // expect: none
    public byte[] WriterCopied()
    {
        using var writer = new PooledBufferWriter(_buffers);
        Text.Fill(writer);
        return writer.WrittenSequence.ToArray();
    }

    // expect: none
    public IResult WriterCopiedIntoResult()
    {
        using var writer = new PooledBufferWriter(_buffers);
        Text.Fill(writer);
        return Results.Bytes(writer.ToArray());
    }

    // expect: none
    public async Task WriterWrittenBeforeDispose(Stream s)
    {
        using var writer = new PooledBufferWriter(_buffers);
        Text.Fill(writer);
        foreach (ReadOnlyMemory<byte> segment in writer.WrittenSequence)
            await s.WriteAsync(segment);
    }

    // expect: none
    public PooledBufferWriter WriterHandedOver()
    {
        var writer = new PooledBufferWriter(_buffers);
        Text.Fill(writer);
        return writer;
    }

    // expect: none
    public ReadOnlySequence<byte> StreamNotDisposedHere(PooledBufferStream stream) => stream.GetReadOnlySequence();

    // expect: none
    public int StreamCopiedTo(Stream target)
    {
        using var stream = new PooledBufferStream(_buffers);
        stream.WriteByte(1);
        stream.Position = 0;
        stream.CopyTo(target);
        return (int)stream.Length;
    }

    // ------------------------------------------------------------------ record arrays and shared views

    // expect: none
    public int ArrayDisposed(int n)
    {
        using RecordArray<IPoint> points = _allocator.NewArray<IPoint>(n);
        return points.Length;
    }

    // expect: none
    public RecordArray<IPoint> ArrayReturned(int n) => _allocator.NewArray<IPoint>(n);

    // expect: none
    public void OwnViewPerRun(int n)
    {
        Parallel.For(0, n, i =>
        {
            RecordView<IPoint> view = _points.CreateView();
            Io.Consume(view.MoveTo(i).X);
        });
    }

    // expect: none
    public object IndexerInEndpoint(IEndpointRouteBuilder app) => app.MapGet("/points/{id}", (int id) => _points[id].X);

    // expect: none
    public int FieldInPlainMethod()
    {
        int sum = 0;
        foreach (IPoint p in _points.Scan()) sum += p.X;
        return sum;
    }

    // expect: none
    public Task<int> LocalArrayInTask(int n) => Task.Run(() =>
    {
        using RecordArray<IPoint> points = _allocator.NewArray<IPoint>(n);
        int sum = 0;
        foreach (IPoint p in points.Scan()) sum += p.X;
        return sum;
    });

    // expect: none
    public Task<int> CapturedByOneTask(RecordArray<IPoint> points) => Task.Run(() => points.MoveTo(0).X);

    // expect: none
    public async Task<int> LocalArrayInAsyncMethod(RecordArray<IPoint> points)
    {
        await Io.DelayAsync();
        return points.MoveTo(0).X;
    }
}

public sealed class Stash
{
    private byte[]? _kept;
    public void Put(byte[] array) => _kept = array;
    public int Length => _kept?.Length ?? 0;
}
