using System.Diagnostics;
using System.Net.Sockets;
using Manaloc.Buffers;
using Manaloc.Threading;
using RequestServer.Protocol;

namespace RequestServer.Servers.Manaloc;

/// <summary>
/// The answers of one connection on their way to its socket. The reader and the dispatcher's workers
/// append whole frames (never blocking on the socket, so a client that reads slowly stalls only itself);
/// one async writer loop per connection sends everything appended so far in one call, double-buffered.
/// </summary>
/// <remarks>
/// Everything shared is guarded by <c>_lock</c>, the writer's "I am waiting" flag included, so a wake-up
/// is handed over exactly once: an appender that finds the flag set clears it and completes the reusable
/// source, and the writer sets it only after finding nothing to send. An answer is counted answered once
/// its send completed, unanswered if the socket failed; either way its share slot goes back to the
/// connection then (unsent answers count against the share, so a client that stops reading is paused).
/// </remarks>
internal sealed class AnswerWriter
{
    private const int InitialSize = 16 * 1024;
    private readonly Socket _socket;
    private readonly BufferManager _buffers;
    private readonly ServerCounters _counters;
    private readonly Action<int> _releaseShare;
    private readonly Lock _lock = new();
    // Continuations on the ThreadPool: the worker that wakes the writer goes back to work at once, and the
    // writer sends everything appended meanwhile in one call (run inline, each answer cost a worker a send).
    private readonly ReusableValueTaskSource<bool> _ready = new(runContinuationsAsynchronously: true);
    private readonly long[] _pendingCounts = new long[4];
    private readonly long[] _sendingCounts = new long[4];
    private byte[] _pending;
    private byte[] _sending;
    private int _pendingLength, _pendingShare, _sendingShare;
    private bool _writerWaiting, _closing, _broken;
    private long _sendStarted; // Stopwatch timestamp of the send in progress; 0 when none

    public AnswerWriter(Socket socket, BufferManager buffers, ServerCounters counters, Action<int> releaseShare)
    {
        _socket = socket;
        _buffers = buffers;
        _counters = counters;
        _releaseShare = releaseShare;
        // Small to start (most answers are tens of bytes); Enqueue grows the pending buffer for large ones.
        _pending = buffers.Rent(InitialSize);
        _sending = buffers.Rent(InitialSize);
        Completion = WriteLoopAsync();
    }

    /// <summary>Completes when the writer has sent (or given up on) everything, after <see cref="Close"/>.</summary>
    public Task Completion { get; }

    /// <summary>True when one send has waited longer than <paramref name="limit"/> (the client stopped reading).</summary>
    public bool IsStuck(TimeSpan limit)
    {
        long started = Volatile.Read(ref _sendStarted);
        return started != 0 && Stopwatch.GetElapsedTime(started) > limit;
    }

    /// <summary>Appends one worker's answer, which holds one share slot.</summary>
    public void Enqueue(ReadOnlySpan<byte> frame, Status status)
    {
        Span<long> counts = stackalloc long[4];
        counts[(int)status] = 1;
        Enqueue(frame, counts, shareSlots: 1);
    }

    /// <summary>Appends whole frames; <paramref name="counts"/> says how many of each status they hold (control answers are not counted).</summary>
    public void Enqueue(ReadOnlySpan<byte> frames, ReadOnlySpan<long> counts, int shareSlots)
    {
        bool wake = false, refused = false;
        lock (_lock)
        {
            if (_broken || _closing)
            {
                refused = true;
            }
            else
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
                for (int s = 0; s < counts.Length; s++) _pendingCounts[s] += counts[s];
                _pendingShare += shareSlots;
                wake = _writerWaiting;
                _writerWaiting = false;
            }
        }
        if (refused)
        {
            for (int s = 0; s < counts.Length; s++) Settle(counts[s], (Status)s, sent: false);
            if (shareSlots > 0) _releaseShare(shareSlots);
        }
        if (wake) _ready.SetResult(true);
    }

    /// <summary>No more appends: the writer sends what is pending and ends.</summary>
    public void Close()
    {
        bool wake;
        lock (_lock)
        {
            _closing = true;
            wake = _writerWaiting;
            _writerWaiting = false;
        }
        if (wake) _ready.SetResult(true);
    }

    private async Task WriteLoopAsync()
    {
        while (true)
        {
            int length;
            bool broken;
            lock (_lock)
            {
                if (_pendingLength == 0)
                {
                    if (_closing) break;
                    _writerWaiting = true;
                    length = -1;
                }
                else
                {
                    (_pending, _sending) = (_sending, _pending);
                    length = _pendingLength;
                    _pendingLength = 0;
                    _pendingCounts.CopyTo(_sendingCounts, 0);
                    Array.Clear(_pendingCounts);
                    _sendingShare = _pendingShare;
                    _pendingShare = 0;
                }
                broken = _broken;
            }
            if (length < 0)
            {
                await _ready.Task.ConfigureAwait(false);
                _ready.Reset();
                continue;
            }
            bool sent = !broken && await SendAsync(length).ConfigureAwait(false);
            for (int s = 0; s < _sendingCounts.Length; s++) Settle(_sendingCounts[s], (Status)s, sent);
            if (_sendingShare > 0) _releaseShare(_sendingShare);
        }
        _buffers.Return(_pending);
        _buffers.Return(_sending);
    }

    private async ValueTask<bool> SendAsync(int length)
    {
        Volatile.Write(ref _sendStarted, Stopwatch.GetTimestamp());
        try
        {
            for (int sent = 0; sent < length;)
            {
                sent += await _socket.SendAsync(_sending.AsMemory(sent, length - sent), SocketFlags.None).ConfigureAwait(false);
            }
            return true;
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            lock (_lock) _broken = true; // the client is gone: later answers are counted unanswered at once
            return false;
        }
        finally
        {
            Volatile.Write(ref _sendStarted, 0);
        }
    }

    private void Settle(long count, Status status, bool sent)
    {
        for (long i = 0; i < count; i++)
        {
            if (sent) _counters.CountAnswered(status);
            else _counters.CountUnanswered();
        }
    }
}
