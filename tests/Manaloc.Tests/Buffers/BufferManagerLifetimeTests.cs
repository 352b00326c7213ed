using Manaloc.Buffers;
using Manaloc.Pooling;
using Manaloc.Tests.Pooling;

namespace Manaloc.Tests.Buffers;

/// <summary>A buffer manager dropped without Dispose: its buffers and slot id are given back once it is collected.</summary>
public sealed class BufferManagerLifetimeTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Managers_dropped_without_Dispose_free_their_buffers_and_slot_ids(bool trimAfterGen2)
    {
        var weak = new List<WeakReference>();
        var leases = new List<SlotLease>();
        MakeAndDrop(weak, leases, trimAfterGen2);
        DroppedOwners.AssertCollectedAndReleased(weak, leases);
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void MakeAndDrop(List<WeakReference> weak, List<SlotLease> leases, bool trimAfterGen2)
    {
        for (int i = 0; i < 20; i++)
        {
            var manager = new BufferManager(new BufferManagerOptions { Name = "dropped" + i, TrimAfterGen2 = trimAfterGen2 });
            leases.Add(manager.Lease);
            var a = manager.Rent(64);
            var b = manager.Rent(64);
            weak.Add(new WeakReference(a));
            weak.Add(new WeakReference(b));
            manager.Return(a); // to the class stack
            manager.Return(b);
            manager.Return(manager.Rent(64)); // one rented back and returned: the hot slot or the stack
        }
    }
}
