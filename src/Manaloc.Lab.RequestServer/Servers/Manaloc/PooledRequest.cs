using Manaloc.Threading;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Manaloc;

/// <summary>
/// One accepted request of the Manaloc build, rented from a pool, queued on its connection and run in the
/// connection's turn on the dispatcher: accepting and running a request allocates nothing in steady state.
/// </summary>
internal sealed class PooledRequest
{
    private readonly ManalocServer _server;
    private ManalocConnection? _connection;
    private long _id;
    private Op _op;
    private Deadline _deadline;
    private byte[]? _payload; // rented from the server's buffer manager
    private int _payloadLength;

    public PooledRequest(ManalocServer server) => _server = server;

    public void Init(ManalocConnection connection, in RequestHeader header, ReadOnlySpan<byte> payload)
    {
        _connection = connection;
        _id = header.Id;
        _op = header.Op;
        // Monotonic and allocation-free; the budget counts from the moment the frame was read.
        _deadline = header.DeadlineMicros == 0 ? Deadline.Infinite : Deadline.After(TimeSpan.FromMicroseconds(header.DeadlineMicros));
        _payload = _server.Buffers.Rent(Math.Max(payload.Length, 1));
        _payloadLength = payload.Length;
        payload.CopyTo(_payload);
    }

    /// <summary>Runs the request (or answers expired, or busy once the shutdown's drain is over), hands the answer to the connection and recycles itself.</summary>
    public void Execute()
    {
        var connection = _connection!;
        int answerSize = RequestHandler.AnswerSize(_op, _payloadLength);
        byte[] response = _server.Buffers.Rent(Frame.ResponseSize(answerSize));
        // Returned in finally: a throw from the handler's bookkeeping or the connection must not strand the buffer.
        try
        {
            Status status;
            int answerLength = 0;
            if (_server.DrainOver)
            {
                status = Status.Busy;
                _server.Counters.CountShutdownBusy();
            }
            else if (_deadline.IsExpired)
            {
                status = Status.Expired; // checked before work starts: late work is not done at all
            }
            else
            {
                try
                {
                    answerLength = RequestHandler.Execute(_op, _payload.AsSpan(0, _payloadLength), response.AsSpan(Frame.LengthSize + Frame.ResponseHeaderSize), _server.RecordBatch);
                    status = Status.Ok;
                }
                catch (Exception e) when (e is not OutOfMemoryException)
                {
                    status = Status.Error; // a validated request should not fail; if it does, it is answered, not lost
                    answerLength = 0;
                }
            }
            Frame.WriteResponseHeader(response, _id, status, answerLength);
            connection.Answer(response.AsSpan(0, Frame.ResponseSize(answerLength)), status);
        }
        finally
        {
            _server.Buffers.Return(response);
        }
        Recycle();
    }

    /// <summary>Gives the payload buffer back and this object to the pool.</summary>
    public void Recycle()
    {
        if (_payload is not null) _server.Buffers.Return(_payload);
        _payload = null;
        _connection = null;
        _server.Requests.Return(this);
    }
}
