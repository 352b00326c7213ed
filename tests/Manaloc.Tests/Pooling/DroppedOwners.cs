using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>Shared by the lifetime tests of pools and buffer managers dropped without Dispose.</summary>
internal static class DroppedOwners
{
    /// <summary>
    /// Collects (a few full GCs with finalizers) until every pooled object is gone and every slot
    /// lease is released, then asserts both.
    /// </summary>
    public static void AssertCollectedAndReleased(IReadOnlyList<WeakReference> pooled, IReadOnlyList<SlotLease> leases)
    {
        for (int i = 0; i < 4 && (pooled.Any(w => w.IsAlive) || leases.Any(l => !l.IsReleased)); i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.Equal(0, pooled.Count(w => w.IsAlive));
        Assert.Equal(0, leases.Count(l => !l.IsReleased));
    }
}
