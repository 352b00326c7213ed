namespace Manaloc.AspNetCore.Dispatching;

/// <summary>
/// Work items in progress per client, capped at a share, with a bounded line per client for the items over it:
/// <see cref="TryAcquire"/> before queuing, <see cref="Release"/> when the item has run (or was not queued after all).
/// </summary>
/// <remarks>
/// <para>Why a line and not only a refusal: a client answered at once comes straight back, so a flooder that
/// ignores <c>Retry-After</c> turns refusals into a busy loop that costs the server as much as its work did.
/// Waiting in its own line costs nothing while it waits, and holds the flooder to its share of the dispatcher:
/// the others' work never queues behind more than one share per client. Over the line's bound it is refused.</para>
/// <para>Memory ordering: a client's count and line live in one <see cref="Entry"/> and change only under that
/// entry's lock, so one client's acquires, releases and hand-overs are serialised and the count never passes the
/// share. A release with someone in line hands its slot over (the count stays); the waiter's task is completed
/// after the lock is released, and its continuation runs asynchronously. An entry whose count drops to zero (its
/// line is then empty: a line forms only at a full share) stays in the map for the client's next request while the
/// map holds at most <c>idleClientsKept</c> entries (<see cref="IdleClientsKept"/> by default) (a client sending one request at a time would otherwise
/// allocate an entry, its line and a map node per request); beyond that it is marked retired and removed from the
/// map inside the same lock; a thread that found the retired entry before its removal sees the mark once it holds
/// the lock and starts again with the map. So two live entries never exist for one client at once, and the map holds
/// the clients with work in progress plus at most <c>idleClientsKept</c> idle ones. Different clients never
/// share a lock. Thread safety: safe from any thread.</para>
/// </remarks>
internal sealed class ClientShares(int share, int line, int idleClientsKept = ClientShares.IdleClientsKept)
{
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, Entry> _clients = new(StringComparer.Ordinal);

    /// <summary>Idle clients (nothing queued or running) whose entry is kept for their next request, by default.</summary>
    public const int IdleClientsKept = 1024;

    // Requests in the lines, and clients with work in progress (statistics: Interlocked so no change is lost; they order nothing).
    private int _waiting;
    private int _active;

    /// <summary>Clients with work in progress now.</summary>
    public int ActiveClients => Volatile.Read(ref _active);

    /// <summary>Requests waiting in their client's line now (one whose client left counts until a release skips it).</summary>
    public int Waiting => Volatile.Read(ref _waiting);

    /// <summary>The share (work items per client).</summary>
    public int Share => share;

    /// <summary>
    /// Counts one more item for <paramref name="client"/>: the entry to release when it is done, at once when the
    /// client is under its share, or once a slot is handed over when it is in line; null when the line is full too.
    /// </summary>
    public ValueTask<Entry?> TryAcquire(string client, CancellationToken cancellation = default)
    {
        while (true)
        {
            var entry = _clients.GetOrAdd(client, static key => new Entry(key));
            lock (entry)
            {
                if (entry.Retired) continue; // removed after we looked it up: take the map's current one
                if (entry.Count < share)
                {
                    if (entry.Count++ == 0) Interlocked.Increment(ref _active);
                    return ValueTask.FromResult<Entry?>(entry);
                }
                if (entry.Line.Count >= line) return ValueTask.FromResult<Entry?>(null);
                var waiter = new TaskCompletionSource<Entry?>(TaskCreationOptions.RunContinuationsAsynchronously);
                entry.Line.Enqueue(waiter);
                Interlocked.Increment(ref _waiting);
                if (cancellation.CanBeCanceled)
                {
                    // A cancelled waiter stays in line until a release skips it (TrySetResult fails on it).
                    cancellation.UnsafeRegister(static state => ((TaskCompletionSource<Entry?>)state!).TrySetCanceled(), waiter);
                }
                return new ValueTask<Entry?>(waiter.Task);
            }
        }
    }

    /// <summary>Counts one item of <paramref name="entry"/>'s client as done: its slot goes to the first in line, if any.</summary>
    public void Release(Entry entry)
    {
        TaskCompletionSource<Entry?>? next = null;
        lock (entry)
        {
            System.Diagnostics.Debug.Assert(entry.Count > 0 && !entry.Retired, "released more than acquired");
            while (entry.Line.TryDequeue(out var waiter))
            {
                Interlocked.Decrement(ref _waiting);
                if (!waiter.Task.IsCompleted)
                {
                    next = waiter;
                    break;
                }
            }
            if (next is null && --entry.Count == 0)
            {
                Interlocked.Decrement(ref _active);
                if (_clients.Count > idleClientsKept)
                {
                    entry.Retired = true;
                    _clients.TryRemove(new KeyValuePair<string, Entry>(entry.Client, entry));
                }
            }
        }
        if (next is not null && !next.TrySetResult(entry)) Release(entry); // cancelled in the meantime: pass the slot on
    }

    /// <summary>One client's count and line; its lock guards <see cref="Count"/>, <see cref="Line"/> and <see cref="Retired"/>.</summary>
    internal sealed class Entry(string client)
    {
        public string Client { get; } = client;
        public int Count;
        public bool Retired;
        public readonly Queue<TaskCompletionSource<Entry?>> Line = new();
    }
}
