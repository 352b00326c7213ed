namespace Manaloc.AspNetCore.Dispatching;

/// <summary>
/// Work items in progress per client, capped at a share: <see cref="TryAcquire"/> before queuing,
/// <see cref="Release"/> when the item has run (or was not queued after all).
/// </summary>
/// <remarks>
/// Memory ordering: a client's count lives in one <see cref="Entry"/> and changes only under that entry's
/// lock, so increments and decrements of one client are serialised and the count never passes the share.
/// An entry whose count drops to zero is marked retired and removed from the map inside the same lock; a
/// thread that found the retired entry in the map before its removal sees the mark once it holds the lock,
/// and starts again with the map (where it finds or adds a fresh entry). So two live entries never exist for
/// one client at once, and the map holds only clients with work in progress (a client that stops costs nothing).
/// Different clients never share a lock. Thread safety: safe from any thread.
/// </remarks>
internal sealed class ClientShares(int share)
{
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, Entry> _clients = new(StringComparer.Ordinal);

    /// <summary>Clients with work in progress now.</summary>
    public int ActiveClients => _clients.Count;

    /// <summary>The share (work items per client).</summary>
    public int Share => share;

    /// <summary>Counts one more item for <paramref name="client"/> unless it already has <see cref="Share"/>; the entry to release, or null when over the share.</summary>
    public Entry? TryAcquire(string client)
    {
        while (true)
        {
            var entry = _clients.GetOrAdd(client, static key => new Entry(key));
            lock (entry)
            {
                if (entry.Retired) continue; // removed after we looked it up: take the map's current one
                if (entry.Count >= share) return null;
                entry.Count++;
                return entry;
            }
        }
    }

    /// <summary>Counts one item of <paramref name="entry"/>'s client as done.</summary>
    public void Release(Entry entry)
    {
        lock (entry)
        {
            System.Diagnostics.Debug.Assert(entry.Count > 0 && !entry.Retired, "released more than acquired");
            if (--entry.Count > 0) return;
            entry.Retired = true;
            _clients.TryRemove(new KeyValuePair<string, Entry>(entry.Client, entry));
        }
    }

    /// <summary>One client's count; its lock guards <see cref="Count"/> and <see cref="Retired"/>.</summary>
    internal sealed class Entry(string client)
    {
        public string Client { get; } = client;
        public int Count;
        public bool Retired;
    }
}
