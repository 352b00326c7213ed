using System.Diagnostics;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Manaloc;

// Turns: queueing a connection's requests, running them one per turn on the dispatcher, and when a turn sends its answers.
internal sealed partial class ManalocConnection
{
    /// <summary>Queues a request on this connection and makes sure the connection has its turn in the dispatcher; false when the dispatcher refused (shutting down).</summary>
    private bool TryPost(in RequestHeader header, ReadOnlySpan<byte> payload)
    {
        var request = _server.Requests.Rent();
        request.Init(this, header, payload);
        Interlocked.Increment(ref _inFlight);
        bool postTurn;
        lock (_localLock)
        {
            _local[(_localHead + _localCount) % _local.Length] = request; // room: _localCount ≤ _inFlight ≤ share
            _localCount++;
            postTurn = !_turnPosted;
            _turnPosted = true;
        }
        if (!postTurn || _server.Dispatcher.TryPost(_runTurn)) return true;
        // Refused: no turn was out, so the queue held only this request (invariant below); take it back.
        lock (_localLock)
        {
            _localCount--;
            _local[(_localHead + _localCount) % _local.Length] = null;
            _turnPosted = false;
        }
        Interlocked.Decrement(ref _inFlight);
        request.Recycle();
        return false;
    }

    /// <summary>
    /// This connection's turn on a dispatcher worker: runs its oldest request, then goes to the back of the
    /// dispatcher's queue if more are waiting. So a connection's requests run one at a time, in order, and a
    /// request waits behind at most one request of each other connection, however many the flooder has queued.
    /// </summary>
    /// <remarks>
    /// <para>Invariant, under <c>_localLock</c>: <c>_turnPosted</c> is true exactly while this connection's turn is
    /// queued in the dispatcher or running, and a turn is out whenever the local queue is not empty. Hence at
    /// most one turn per connection is queued, and the dispatcher (capacity: the connection cap) never refuses
    /// one except once it is shut down; then the worker runs the rest here (answered busy once the drain is over).</para>
    /// <para>Answers: the worker appends each to the writer and sends them itself (<see cref="AnswerWriter.Flush"/>,
    /// which never blocks) once the turn leaves nothing queued, or once half the share of answers (the reader's
    /// resume mark: sent, they let a paused reader read a batch), <see cref="FlushBytes"/> bytes or an answer 1 ms
    /// old are waiting. A connection with one request (a polite client) so gets its answer at once; a pipelining one
    /// gets them in batches, one system call each, as Kestrel's flush per read does. An answer held back is sent no
    /// later than the end of a later turn of the same connection, which the invariant guarantees comes.</para>
    /// </remarks>
    private void RunTurn()
    {
        while (true)
        {
            PooledRequest? request;
            lock (_localLock)
            {
                if (_localCount == 0)
                {
                    // Not reached while the invariant holds (a turn is out only with requests queued); kept safe anyway.
                    _heldSince = 0;
                    _turnPosted = false;
                    request = null;
                }
                else
                {
                    request = _local[_localHead]!;
                    _local[_localHead] = null;
                    _localHead = (_localHead + 1) % _local.Length;
                    _localCount--;
                }
            }
            if (request is null)
            {
                _writer.Flush();
                return;
            }
            long started = Stopwatch.GetTimestamp();
            request.Execute();
            if (_heldSince == 0) _heldSince = started;
            bool more;
            lock (_localLock) more = _localCount > 0;
            if (!more || _writer.PendingAnswers >= Math.Max(1, _resumeMark) || _writer.PendingBytes >= FlushBytes
                || Stopwatch.GetTimestamp() - _heldSince >= FlushAfterTicks)
            {
                _heldSince = 0;
                _writer.Flush();
            }
            if (!more)
            {
                lock (_localLock)
                {
                    if (_localCount == 0)
                    {
                        _turnPosted = false;
                        return;
                    }
                }
                // A request arrived since: the turn goes on (its answer waits for a later flush of this connection).
            }
            if (_server.Dispatcher.TryPost(_runTurn)) return; // to the back of the line
        }
    }
}
