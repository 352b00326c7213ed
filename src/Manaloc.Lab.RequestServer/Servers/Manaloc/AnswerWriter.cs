using System.Diagnostics;
using System.Net.Sockets;
using Manaloc.Buffers;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Manaloc;

/// <summary>
/// The answers of one connection on their way to its socket. The reader and the dispatcher's workers append
/// whole frames; <see cref="Flush"/> sends everything appended so far in one call, on the calling thread and
/// without blocking: a send the socket takes at once (the usual case) completes right there, so an answer
/// reaches the socket with no thread hand-off; a send the socket cannot take yet completes later on an I/O
/// thread, which then sends whatever was appended meanwhile. One send at a time, double-buffered, through one
/// reused <see cref="SocketAsyncEventArgs"/>: sending allocates nothing.
/// </summary>
/// <remarks>
/// <para>Why the caller chooses when to flush: a system call per answer was most of the Manaloc build's cost per
/// request (and made the pipelined client read and write one frame at a time); the connection flushes once its
/// turn leaves it with nothing queued, or once enough answers are waiting (<see cref="ManalocConnection"/>).</para>
/// <para>Concurrency: what is appended (<c>_pending*</c>) and the flags are guarded by <c>_lock</c>. The send side
/// (<c>_sending*</c>, <c>_send</c>) belongs to whoever set <c>_sendInFlight</c> under the lock (the flushing thread),
/// and passes to the completion callback through the socket: the runtime runs <c>Completed</c> only after the
/// <c>SendAsync</c> call that returned true, with a full barrier between them. The holder clears the flag under the
/// lock only after finding nothing more to send, so a frame appended before that is sent by this holder, and one
/// appended after it waits for the next <see cref="Flush"/>: never both, never neither.</para>
/// <para>Counting: an answer is counted answered once its send completed, unanswered if the socket failed (then every
/// later append is refused and counted unanswered at once); either way its share slots go back to the connection then,
/// so unsent answers count against the share and a client that stops reading is paused.</para>
/// </remarks>
internal sealed class AnswerWriter : IDisposable
{
    private const int InitialSize = 16 * 1024;
    private readonly Socket _socket;
    private readonly BufferManager _buffers;
    private readonly ServerCounters _counters;
    private readonly Action<int> _releaseShare;
    private readonly Lock _lock = new();
    private readonly SocketAsyncEventArgs _send = new();
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    // Appended, not yet sending (guarded by _lock).
    private readonly long[] _pendingCounts = new long[4];
    private byte[] _pending;
    private int _pendingLength, _pendingShare, _pendingAnswers;
    private bool _sendInFlight, _closing, _broken;
    // Being sent (owned by the holder of _sendInFlight).
    private readonly long[] _sendingCounts = new long[4];
    private byte[] _sending;
    private int _sendingLength, _sendingOffset, _sendingShare;
    private long _sendStarted; // Stopwatch timestamp of the send in progress; 0 when none

    public AnswerWriter(Socket socket, BufferManager buffers, ServerCounters counters, Action<int> releaseShare)
    {
        _socket = socket;
        _buffers = buffers;
        _counters = counters;
        _releaseShare = releaseShare;
        // Small to start (most answers are tens of bytes); Append grows the pending buffer for large ones.
        _pending = buffers.Rent(InitialSize);
        _sending = buffers.Rent(InitialSize);
        _send.Completed += (_, _) => { if (AfterSend()) SendTaken(); };
    }

    /// <summary>Completes when everything appended has been sent (or given up on), after <see cref="Close"/>.</summary>
    public Task Completion => _done.Task;

    /// <summary>Answers appended and not yet being sent (a snapshot, for the flush policy).</summary>
    public int PendingAnswers => Volatile.Read(ref _pendingAnswers);

    /// <summary>Bytes appended and not yet being sent (a snapshot, for the flush policy).</summary>
    public int PendingBytes => Volatile.Read(ref _pendingLength);

    /// <summary>True when one send has waited longer than <paramref name="limit"/> (the client stopped reading).</summary>
    public bool IsStuck(TimeSpan limit)
    {
        long started = Volatile.Read(ref _sendStarted);
        return started != 0 && Stopwatch.GetElapsedTime(started) > limit;
    }

    /// <summary>Appends one worker's answer, which holds one share slot. Does not send: see <see cref="Flush"/>.</summary>
    public void Append(ReadOnlySpan<byte> frame, Status status)
    {
        Span<long> counts = stackalloc long[4];
        counts[(int)status] = 1;
        Append(frame, counts, shareSlots: 1);
    }

    /// <summary>Appends whole frames; <paramref name="counts"/> says how many of each status they hold (control answers are not counted).</summary>
    public void Append(ReadOnlySpan<byte> frames, ReadOnlySpan<long> counts, int shareSlots)
    {
        bool refused;
        lock (_lock)
        {
            refused = _broken || _closing;
            if (!refused)
            {
                if (_pendingLength + frames.Length > _pending.Length)
                {
                    var larger = _buffers.Rent(2 * (_pendingLength + frames.Length));
                    _pending.AsSpan(0, _pendingLength).CopyTo(larger);
                    _buffers.Return(_pending);
                    _pending = larger;
                }
                frames.CopyTo(_pending.AsSpan(_pendingLength));
                _pendingLength += frames.Length;
                for (int s = 0; s < counts.Length; s++)
                {
                    _pendingCounts[s] += counts[s];
                    _pendingAnswers += (int)counts[s];
                }
                _pendingShare += shareSlots;
            }
        }
        if (refused) Settle(counts, shareSlots, sent: false);
    }

    /// <summary>
    /// Sends everything appended so far, unless a send is in flight (its completion sends it). Never blocks: the
    /// socket takes the bytes now or the send completes on an I/O thread.
    /// </summary>
    public void Flush()
    {
        lock (_lock)
        {
            if (_sendInFlight || _pendingLength == 0) return;
            TakePending();
        }
        SendTaken();
    }

    /// <summary>No more appends: what is pending is sent, then <see cref="Completion"/> completes.</summary>
    public void Close()
    {
        bool done;
        lock (_lock)
        {
            _closing = true;
            done = !_sendInFlight && _pendingLength == 0;
        }
        if (done) _done.TrySetResult();
        else Flush(); // with a send in flight, its completion sends the rest and completes
    }

    /// <summary>Moves the pending frames to the send side and takes the send token. Under <c>_lock</c>.</summary>
    private void TakePending()
    {
        Debug.Assert(!_sendInFlight && _pendingLength > 0);
        (_pending, _sending) = (_sending, _pending);
        _sendingLength = _pendingLength;
        _sendingOffset = 0;
        _pendingCounts.CopyTo(_sendingCounts, 0);
        Array.Clear(_pendingCounts);
        _sendingShare = _pendingShare;
        _pendingLength = _pendingShare = _pendingAnswers = 0;
        _sendInFlight = true;
    }

    /// <summary>Sends the send side's bytes; loops while the socket takes them at once, returns when a send is pending (its callback goes on) or all is sent.</summary>
    private void SendTaken()
    {
        while (true)
        {
            _send.SetBuffer(_sending, _sendingOffset, _sendingLength - _sendingOffset);
            Volatile.Write(ref _sendStarted, Stopwatch.GetTimestamp());
            bool pending;
            try
            {
                pending = _socket.SendAsync(_send);
            }
            catch (ObjectDisposedException)
            {
                // The connection gave up on a client that stopped reading and closed the socket.
                _send.SocketError = SocketError.OperationAborted;
                pending = false;
            }
            if (pending || !AfterSend()) return;
        }
    }

    /// <summary>Settles the send that just ended; true when the caller must send again (the rest of the buffer, or the next one taken).</summary>
    private bool AfterSend()
    {
        Volatile.Write(ref _sendStarted, 0);
        bool failed = _send.SocketError != SocketError.Success || _send.BytesTransferred <= 0;
        if (!failed)
        {
            _sendingOffset += _send.BytesTransferred;
            if (_sendingOffset < _sendingLength) return true; // a partial send: the rest goes next
        }
        // The send just ended is settled after the lock (whose TakePending reuses the send side), failures first
        // marked: once an append can see the failure, it is refused rather than left pending.
        Span<long> ended = stackalloc long[4];
        _sendingCounts.CopyTo(ended);
        int endedShare = _sendingShare;
        Span<long> dropped = stackalloc long[4];
        int droppedShare = 0;
        bool done = false, again = false;
        lock (_lock)
        {
            if (failed && !_broken)
            {
                // The client is gone: what is pending will never be sent, and later appends are refused.
                _broken = true;
                _pendingCounts.CopyTo(dropped);
                Array.Clear(_pendingCounts);
                droppedShare = _pendingShare;
                _pendingLength = _pendingShare = _pendingAnswers = 0;
            }
            _sendInFlight = false;
            if (_pendingLength > 0)
            {
                TakePending();
                again = true;
            }
            else
            {
                done = _closing;
            }
        }
        Settle(ended, endedShare, sent: !failed);
        Settle(dropped, droppedShare, sent: false);
        if (done) _done.TrySetResult();
        return again;
    }

    private void Settle(ReadOnlySpan<long> counts, int shareSlots, bool sent)
    {
        for (int s = 0; s < counts.Length; s++)
        {
            if (counts[s] == 0) continue;
            if (sent) _counters.CountAnswered((Status)s, counts[s]);
            else _counters.CountUnanswered(counts[s]);
        }
        if (shareSlots > 0) _releaseShare(shareSlots);
    }

    /// <summary>Gives the buffers back. Call after <see cref="Completion"/>.</summary>
    public void Dispose()
    {
        _send.Dispose();
        _buffers.Return(_pending);
        _buffers.Return(_sending);
    }
}
