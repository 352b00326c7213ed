// Seeded misuses of the rules on pooled writers and memory (MNL110), on the exception path (MNL111) and on an
// array's moving view read after an await (MNL112): each through if/else, a loop, try/catch/finally, an early return, a switch, a local
// function and a lambda. Each method names the rule it must draw and nothing else.
using System.IO;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace Corpus;

public sealed class PooledMisuse
{
    private readonly BufferManager _buffers = new();
    private readonly BufferMemoryPool _memory = new();
    private readonly List<ReadOnlyMemory<byte>> _segments = new();
    private readonly RecordArray<IPoint> _points;
    private ReadOnlyMemory<byte> _kept;

    public PooledMisuse(RecordArray<IPoint> points) => _points = points;

    // ------------------------------------------------------------------ MNL110

    // expect: MNL110
    public IResult Mnl110_IfElse(bool c)
    {
        using var writer = new PooledBufferWriter(_buffers);
        Text.Fill(writer);
        if (c) return Results.Bytes(writer.WrittenSequence.First);
        else return Results.Bytes(writer.ToArray());
    }

    // expect: MNL110
    public void Mnl110_Loop()
    {
        using var stream = new PooledBufferStream(_buffers);
        stream.WriteByte(1);
        foreach (ReadOnlyMemory<byte> segment in stream.GetReadOnlySequence())
            _segments.Add(segment);
    }

    // expect: MNL110
    public ReadOnlyMemory<byte> Mnl110_TryCatchFinally()
    {
        var writer = new PooledBufferWriter(_buffers);
        try
        {
            Text.Fill(writer);
            return writer.WrittenSequence.First;
        }
        catch (IOException) { return default; }
        finally { writer.Dispose(); }
    }

    // expect: MNL110
    public async Task<IResult> Mnl110_EarlyReturn(bool empty)
    {
        using var writer = new PooledBufferWriter(_buffers);
        if (empty) return Results.Text("");
        await Io.DelayAsync();
        Text.Fill(writer);
        return Results.Bytes(writer.WrittenSequence.First);
    }

    // expect: MNL110
    public void Mnl110_Switch(int mode)
    {
        using RentedBuffer buffer = _buffers.RentBuffer(64);
        switch (mode)
        {
            case 1: _kept = buffer.Memory; break;
            default: buffer.Span.Clear(); break;
        }
    }

    // expect: MNL110
    public Memory<byte> Mnl110_LocalFunction()
    {
        return Make();
        Memory<byte> Make()
        {
            using IMemoryOwner<byte> owner = _memory.Rent(64);
            return owner.Memory.Slice(0, 16);
        }
    }

    // expect: MNL110
    public Task Mnl110_Lambda(Stream s)
    {
        using var writer = new PooledBufferWriter(_buffers);
        Text.Fill(writer);
        ReadOnlyMemory<byte> body = writer.WrittenSequence.First;
        return Task.Run(() => s.Write(body.Span));
    }

    // ------------------------------------------------------------------ MNL111

    // expect: MNL111
    public void Mnl111_IfElse(Stream s, int n, bool c)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        if (c) Io.Write(s, a, n);
        else a[0] = 1;
        ArrayPool<byte>.Shared.Return(a);
    }

    // expect: MNL111
    public void Mnl111_Loop(Stream s, int count)
    {
        for (int i = 0; i < count; i++)
        {
            RentedBuffer b = _buffers.RentBuffer(64);
            s.Write(b.Span);
            b.Dispose();
        }
    }

    // expect: MNL111
    public void Mnl111_TryCatchFinally(Stream s, int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Read(s, a, n); }
        catch (IOException) { Io.Consume(s); }
        ArrayPool<byte>.Shared.Return(a);
    }

    // expect: MNL111
    public void Mnl111_EarlyReturn(Stream s, int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        if (n == 0) { ArrayPool<byte>.Shared.Return(a); return; }
        Io.Write(s, a, n);
        ArrayPool<byte>.Shared.Return(a);
    }

    // expect: MNL111
    public void Mnl111_Switch(Stream s, int mode)
    {
        IMemoryOwner<byte> owner = _memory.Rent(64);
        switch (mode)
        {
            case 0: s.Write(owner.Memory.Span); break;
            default: owner.Memory.Span.Clear(); break;
        }
        owner.Dispose();
    }

    // expect: MNL111
    public void Mnl111_LocalFunction(Stream s)
    {
        Send(64);
        void Send(int n)
        {
            byte[] a = ArrayPool<byte>.Shared.Rent(n);
            Io.Write(s, a, n);
            ArrayPool<byte>.Shared.Return(a);
        }
    }

    // expect: MNL111
    public void Mnl111_Lambda(Stream s, List<int> sizes)
    {
        sizes.ForEach(n =>
        {
            byte[] a = ArrayPool<byte>.Shared.Rent(n);
            Io.Write(s, a, n);
            ArrayPool<byte>.Shared.Return(a);
        });
    }

    // ------------------------------------------------------------------ MNL112

    // expect: MNL112
    public async Task<int> Mnl112_IfElse(int i, bool fresh)
    {
        IPoint p = _points.MoveTo(i);
        if (fresh)
        {
            await Io.DelayAsync();
            return p.X;
        }
        else return p.Y;
    }

    // expect: MNL112
    public async Task<int> Mnl112_Loop()
    {
        int sum = 0;
        foreach (IPoint p in _points.Scan())
        {
            await Io.DelayAsync();
            sum += p.X;
        }
        return sum;
    }

    // expect: MNL112
    public async Task<int> Mnl112_TryCatchFinally(int i)
    {
        try
        {
            IPoint p = _points.MoveTo(i);
            await Io.DelayAsync();
            return p.X;
        }
        catch (IndexOutOfRangeException) { return -1; }
        finally { Io.Consume(i); }
    }

    // expect: MNL112
    public object Mnl112_EarlyReturn(IEndpointRouteBuilder app) => app.MapGet("/points/{id}", async (int id) =>
    {
        if (id < 0) return -1;
        IPoint p = _points.MoveTo(id);
        await Io.DelayAsync();
        return p.X;
    });

    // expect: MNL112
    public async Task<int> Mnl112_Switch(int mode)
    {
        IPoint p = _points.View;
        switch (mode)
        {
            case 0:
                await Io.DelayAsync();
                return p.X;
            default: return 0;
        }
    }

    // expect: MNL112
    public async Task<int> Mnl112_LocalFunction(int i)
    {
        return await Read();
        async Task<int> Read()
        {
            IPoint p = _points.MoveTo(i);
            await Io.DelayAsync();
            return p.X;
        }
    }

    // expect: MNL112
    public Task<int> Mnl112_Lambda(RecordArray<IPoint> points) => Task.Run(async () =>
    {
        IPoint p = points.MoveTo(0);
        await Io.DelayAsync();
        return p.X + p.Y;
    });
}
