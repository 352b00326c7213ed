using System.Buffers;
using System.Diagnostics;
using System.IO.Pipelines;
using System.Threading.Tasks.Sources;
using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Threading;

namespace Manaloc.Lab.RequestServer.Servers.Kestrel;

/// <summary>
/// How the kestrel-manaloc build answers a connection's reads: the whole frames of a read run in turns of at most
/// <see cref="TurnTicks"/> of work, the first on the thread that read them and every further one on the host's
/// <see cref="DedicatedThreadDispatcher"/>, one turn per connection at a time, each going to the back of the line.
/// A read completes (a reusable value task, no allocation per read) once its frames are all answered or the stream
/// is malformed.
/// </summary>
/// <remarks>
/// <para>Why turns: inline (the kestrel build) a flooding connection's read runs all its frames on one ThreadPool
/// thread, and the polite connections' reads compete with it for the cores through the OS scheduler. Here a read
/// gets one turn where it was read, so a polite read (a frame or a few) is answered without a hop to the dispatcher
/// and back; what does not fit waits in the dispatcher's line behind at most one short turn of each other connection.
/// Since a connection has at most one turn out, the flooder holds at most one worker (and one turn per read of a
/// ThreadPool thread), and its connection is not read meanwhile (TCP pushes back on it), which bounds what it can
/// make the server hold. Against posting every turn, the first turn where the read came in costs no throughput and
/// shortens the polite tail under a flood (the lab's server experiment compares the builds).</para>
/// <para>Ownership and memory ordering: the first turn runs on the handler's own thread before anything is posted.
/// While a later turn is out, only the worker running it touches the read buffer,
/// the <see cref="PipeWriter"/> and the connection's pending counts; the handler is suspended on the turn's
/// completion. The dispatcher's queue hand-off (a release on post, an acquire on take) orders the handler's writes
/// before the worker's reads, and re-posting a turn does the same between two workers; completing the turn's value
/// task source (its continuation then runs the handler) orders the worker's writes before the handler reads them.</para>
/// </remarks>
internal sealed class FrameTurn : IValueTaskSource<bool>
{
    /// <summary>Work a turn does before it goes to the back of the dispatcher's line (about 100 µs: a polite frame waits behind at most that per busy connection).</summary>
    private static readonly long TurnTicks = Stopwatch.Frequency / 10_000;

    private readonly KestrelServerState _state;
    private readonly PipeWriter _output;
    private readonly Action _run;
    private readonly long[] _pending = new long[4]; // answers by status written since the last flush
    // Continuations run inline on the worker that finishes the turn: the handler then only advances the reader,
    // starts a flush (Kestrel's transport sends on its own threads) and starts the next read.
    private ManualResetValueTaskSourceCore<bool> _completion;
    private ReadOnlySequence<byte> _buffer;
    private long _readAt;

    public FrameTurn(KestrelServerState state, PipeWriter output)
    {
        _state = state;
        _output = output;
        _run = Run;
    }

    /// <summary>How far the last turn got into its buffer.</summary>
    public SequencePosition Consumed { get; private set; }

    /// <summary>Runs the frames of <paramref name="buffer"/> on the dispatcher; true when the stream is malformed (answered, the connection is to close).</summary>
    public ValueTask<bool> RunAsync(ReadOnlySequence<byte> buffer, long readAt)
    {
        _completion.Reset();
        _buffer = buffer;
        _readAt = readAt;
        Consumed = buffer.Start;
        Run(); // the first turn on the thread that read: a read that fits in one turn never waits in the dispatcher's line
        return new ValueTask<bool>(this, _completion.Version);
    }

    private void Run()
    {
        bool malformed;
        bool done;
        try
        {
            (done, malformed) = ProcessSlice();
        }
        catch (Exception e)
        {
            _completion.SetException(e);
            return;
        }
        if (!done)
        {
            var dispatcher = _state.Dispatcher;
            if (dispatcher is not null && dispatcher.TryPost(_run)) return; // to the back of the line
            Run(); // shutting down: finish here
            return;
        }
        Consumed = _buffer.Start;
        _completion.SetResult(malformed);
    }

    /// <summary>Runs whole frames from the buffer for at most one turn's time; (done, malformed).</summary>
    private (bool Done, bool Malformed) ProcessSlice()
        => FrameConnectionHandler.AnswerFrames(_state, ref _buffer, _output, _pending, _readAt, Stopwatch.GetTimestamp() + TurnTicks);

    /// <summary>Answers by status written since the last flush; the handler settles them, with no turn out.</summary>
    public long[] Pending => _pending;

    public bool GetResult(short token) => _completion.GetResult(token);

    public ValueTaskSourceStatus GetStatus(short token) => _completion.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _completion.OnCompleted(continuation, state, token, flags);
}
