using Manaloc.AspNetCore.Dispatching;

namespace Manaloc.AspNetCore.Tests.Dispatching;

public sealed class ClientSharesTests
{
    [Fact]
    public void A_client_gets_its_share_and_no_more_and_others_are_not_affected()
    {
        var shares = new ClientShares(2);
        var a1 = shares.TryAcquire("a");
        var a2 = shares.TryAcquire("a");
        Assert.NotNull(a1);
        Assert.NotNull(a2);
        Assert.Null(shares.TryAcquire("a"));
        Assert.NotNull(shares.TryAcquire("b"));
        shares.Release(a1!);
        Assert.NotNull(shares.TryAcquire("a"));
    }

    [Fact]
    public void A_client_with_nothing_in_progress_is_forgotten()
    {
        var shares = new ClientShares(1);
        var a = shares.TryAcquire("a")!;
        Assert.Equal(1, shares.ActiveClients);
        shares.Release(a);
        Assert.Equal(0, shares.ActiveClients);
        Assert.NotNull(shares.TryAcquire("a"));
    }

    /// <summary>
    /// Threads acquire and release one client's share as fast as they can, counting what they hold; the count
    /// never passes the share and nothing is left at the end. Without the per-entry lock (or with a retired
    /// entry reused) two entries of one client would coexist and the count would pass the share.
    /// </summary>
    [Fact]
    public void Concurrent_acquires_never_pass_the_share_and_retired_entries_are_not_reused()
    {
        const int share = 3;
        var shares = new ClientShares(share);
        int held = 0, most = 0;
        long granted = 0;
        var threads = Enumerable.Range(0, 4).Select(_ => new Thread(() =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                var entry = shares.TryAcquire("client");
                if (entry is null) continue;
                int now = Interlocked.Increment(ref held);
                int seen;
                while (now > (seen = Volatile.Read(ref most)) && Interlocked.CompareExchange(ref most, now, seen) != seen)
                {
                }
                Interlocked.Increment(ref granted);
                Interlocked.Decrement(ref held);
                shares.Release(entry);
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        Assert.InRange(most, 1, share);
        Assert.True(granted > 0);
        Assert.Equal(0, shares.ActiveClients);
    }
}
