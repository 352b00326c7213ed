using System.Net.Sockets;

namespace Manaloc.Lab.Harness;

/// <summary>
/// The sockets an experiment opens: counted over the experiment's life (tests check that none is left
/// open after a run) and held per run in a <see cref="Run"/> that closes them all once, in a finally block.
/// </summary>
/// <remarks>Thread safety: a run's set is shared by its client and server threads (guarded by a lock); the counters are Interlocked.</remarks>
internal sealed class SocketTracker
{
    private int _opened;
    private int _open;

    /// <summary>Sockets opened so far.</summary>
    public int Opened => Volatile.Read(ref _opened);

    /// <summary>Sockets opened and not yet closed (0 after a run).</summary>
    public int Open => Volatile.Read(ref _open);

    /// <summary>A new set for one run.</summary>
    public Run StartRun() => new(this);

    /// <summary>The sockets of one run; closed once by <see cref="CloseAll"/>.</summary>
    internal sealed class Run(SocketTracker tracker)
    {
        private readonly List<Socket> _sockets = [];
        private bool _closed;

        /// <summary>Opens an IPv4 socket and adds it to the run.</summary>
        public Socket Open(SocketType type, ProtocolType protocol) => Track(new Socket(AddressFamily.InterNetwork, type, protocol));

        /// <summary>
        /// Adds a socket to the run. A socket that arrives after the run was closed (an accept racing with
        /// a failing client) is closed at once, so none escapes the finally block.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The run was already closed.</exception>
        public Socket Track(Socket socket)
        {
            Interlocked.Increment(ref tracker._opened); // counters only, read by tests after the run
            Interlocked.Increment(ref tracker._open);
            lock (_sockets)
            {
                if (!_closed)
                {
                    _sockets.Add(socket);
                    return socket;
                }
            }
            socket.Dispose();
            Interlocked.Decrement(ref tracker._open);
            throw new ObjectDisposedException(nameof(Socket), "The run's sockets were already closed.");
        }

        /// <summary>Closes every socket of the run; later <see cref="Track"/> calls close theirs at once.</summary>
        public void CloseAll()
        {
            Socket[] all;
            lock (_sockets)
            {
                _closed = true;
                all = [.. _sockets];
                _sockets.Clear();
            }
            foreach (var socket in all)
            {
                socket.Dispose();
                Interlocked.Decrement(ref tracker._open);
            }
        }
    }
}
