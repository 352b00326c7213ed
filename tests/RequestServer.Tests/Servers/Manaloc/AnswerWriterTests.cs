using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using Manaloc.Buffers;
using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Lab.RequestServer.Servers;
using Manaloc.Lab.RequestServer.Servers.Manaloc;

namespace RequestServer.Tests.Servers.Manaloc;

/// <summary>
/// The Manaloc build's answer path: appends from several threads, flushes that send on the caller's thread or
/// complete later on an I/O thread, and a client that stops reading or goes away. Every appended frame must reach
/// the peer exactly once and whole, or be counted unanswered; every share slot must come back.
/// </summary>
public sealed class AnswerWriterTests : IDisposable
{
    private readonly BufferManager _buffers = new(new BufferManagerOptions { Name = "test.answers", MaxBufferSize = 1 << 20 });
    private readonly ServerCounters _counters = new();
    private readonly Socket _server;
    private readonly Socket _peer;
    private long _released;

    public AnswerWriterTests()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        _peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = 15_000 };
        _peer.Connect(listener.LocalEndPoint!);
        _server = listener.Accept();
    }

    private AnswerWriter NewWriter() => new(_server, _buffers, _counters, slots => Interlocked.Add(ref _released, slots));

    [Fact]
    public async Task Frames_appended_and_flushed_from_several_threads_arrive_once_each_whole_and_in_each_threads_order()
    {
        const int Threads = 4, PerThread = 5000;
        var writer = NewWriter();
        var received = ReadFramesOnOwnThread(Threads * PerThread);
        var appenders = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            Span<byte> frame = stackalloc byte[Frame.ResponseSize(8)];
            Span<byte> payload = stackalloc byte[8];
            for (int i = 0; i < PerThread; i++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(payload, t);
                BinaryPrimitives.WriteInt32LittleEndian(payload[4..], i);
                Frame.WriteResponse(frame, t * PerThread + i, Status.Ok, payload);
                writer.Append(frame, Status.Ok);
                if (i % (t + 1) == 0) writer.Flush(); // threads flush at different rates; some frames wait for another's flush
            }
            writer.Flush();
        })).ToArray();
        foreach (var a in appenders) a.Start();
        foreach (var a in appenders) Assert.True(a.Join(TimeSpan.FromSeconds(60)));
        writer.Close();
        await writer.Completion.WaitAsync(TimeSpan.FromSeconds(30));

        var frames = await received.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(Threads * PerThread, frames.Count);
        Assert.Equal(Threads * PerThread, frames.Select(f => f.Id).Distinct().Count());
        foreach (var byThread in frames.GroupBy(f => f.Thread))
        {
            Assert.Equal(Enumerable.Range(0, PerThread), byThread.Select(f => f.Sequence)); // whole frames, in order
        }
        Assert.Equal(Threads * PerThread, _counters.Ok);
        Assert.Equal(0, _counters.Unanswered);
        Assert.Equal(Threads * PerThread, Interlocked.Read(ref _released));
        writer.Dispose();
    }

    [Fact]
    public async Task Answers_appended_while_the_socket_is_full_go_out_once_the_client_reads_again()
    {
        _server.SendBufferSize = 16 * 1024;
        _peer.ReceiveBufferSize = 16 * 1024;
        var writer = NewWriter();
        var big = new byte[Frame.ResponseSize(Frame.MaxPayload)];
        int appended = 0;
        // The client reads nothing: a send goes pending once the kernel's buffers are full (loopback holds a few MB at most).
        while (!writer.IsStuck(TimeSpan.Zero) && appended < 1000)
        {
            Frame.WriteResponseHeader(big, appended, Status.Ok, Frame.MaxPayload);
            writer.Append(big, Status.Ok);
            writer.Flush();
            appended++;
        }
        Assert.True(writer.IsStuck(TimeSpan.Zero), "a send should be pending while the client does not read");
        // Appended now, while that send is in flight: its completion (on an I/O thread) must send these too.
        for (int i = 0; i < 10; i++)
        {
            Frame.WriteResponseHeader(big, appended, Status.Expired, Frame.MaxPayload);
            writer.Append(big, Status.Expired);
            writer.Flush();
            appended++;
        }
        Assert.True(_counters.Ok + _counters.Expired < appended, "not everything can have been sent yet");

        var frames = await ReadFramesOnOwnThread(appended).WaitAsync(TimeSpan.FromSeconds(30));
        writer.Close();
        await writer.Completion.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(Enumerable.Range(0, appended).Select(i => (long)i), frames.Select(f => f.Id));
        Assert.Equal(appended - 10, _counters.Ok);
        Assert.Equal(10, _counters.Expired);
        Assert.Equal(appended, Interlocked.Read(ref _released));
        Assert.False(writer.IsStuck(TimeSpan.Zero));
        writer.Dispose();
    }

    [Fact]
    public async Task Answers_to_a_client_that_went_away_are_counted_unanswered_and_their_share_comes_back()
    {
        var writer = NewWriter();
        _peer.LingerState = new LingerOption(true, 0); // close with a reset: the server's sends fail
        _peer.Close();
        var frame = new byte[Frame.ResponseSize(0)];
        int appended = 0;
        var until = DateTime.UtcNow.AddSeconds(10);
        // The first sends may still succeed (the reset has not arrived yet); keep answering until one fails.
        while (_counters.Unanswered == 0 && DateTime.UtcNow < until)
        {
            Frame.WriteResponse(frame, appended, Status.Ok, default);
            writer.Append(frame, Status.Ok);
            writer.Flush();
            appended++;
            Thread.Sleep(1);
        }
        Assert.True(_counters.Unanswered > 0, "a send to a reset connection should fail");
        // Once broken, an append is refused at once: counted unanswered, its slot back, nothing pending.
        long unanswered = _counters.Unanswered;
        writer.Append(frame, Status.Busy);
        appended++;
        Assert.Equal(unanswered + 1, _counters.Unanswered);
        Assert.Equal(0, writer.PendingAnswers);

        writer.Close();
        await writer.Completion.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(appended, _counters.Ok + _counters.Unanswered);
        Assert.Equal(appended, Interlocked.Read(ref _released));
        writer.Dispose();
    }

    [Fact]
    public async Task Close_with_nothing_pending_completes_at_once_and_later_appends_are_refused()
    {
        var writer = NewWriter();
        writer.Close();
        await writer.Completion.WaitAsync(TimeSpan.FromSeconds(10));
        writer.Append(new byte[Frame.ResponseSize(0)], Status.Ok);
        Assert.Equal(1, _counters.Unanswered);
        Assert.Equal(1, Interlocked.Read(ref _released));
        writer.Dispose();
    }

    /// <summary>Blocking reads on a thread of their own, not the pool's: the suite's other tests rely on pool timers firing on time.</summary>
    private Task<List<(long Id, int Thread, int Sequence)>> ReadFramesOnOwnThread(int count)
        => Task.Factory.StartNew(() => ReadFrames(count), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    private List<(long Id, int Thread, int Sequence)> ReadFrames(int count)
    {
        var frames = new List<(long, int, int)>(count);
        var buffer = new byte[4 * Frame.MaxResponseFrame];
        int filled = 0;
        while (frames.Count < count)
        {
            int n = _peer.Receive(buffer.AsSpan(filled));
            if (n == 0) break;
            filled += n;
            int consumed = 0;
            while (Frame.TryReadResponse(buffer.AsSpan(consumed, filled - consumed), out long id, out _, out var range, out int size))
            {
                var payload = buffer.AsSpan(consumed, size)[range];
                frames.Add(payload.Length == 8
                    ? (id, BinaryPrimitives.ReadInt32LittleEndian(payload), BinaryPrimitives.ReadInt32LittleEndian(payload[4..]))
                    : (id, -1, -1));
                consumed += size;
            }
            buffer.AsSpan(consumed, filled - consumed).CopyTo(buffer);
            filled -= consumed;
        }
        return frames;
    }

    public void Dispose()
    {
        _peer.Dispose();
        _server.Dispose();
        _buffers.Dispose();
    }
}
