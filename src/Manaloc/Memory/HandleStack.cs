namespace Manaloc.Memory;

/// <summary>
/// Deleted handles of one record type kept by one thread for reuse by its next New
/// (<see cref="TypeAllocatorOptions.RecycleHandles"/>): a bounded array stack.
/// </summary>
/// <remarks>Touched only by the thread whose slab cache holds it; no synchronisation.</remarks>
internal sealed class HandleStack
{
    /// <summary>Handles kept per type and thread: enough to absorb bursts of New/Delete, small enough to bound the memory held.</summary>
    public const int Capacity = 64;

    // Slots are structs: storing into a field of a struct array skips the array-covariance check a
    // NativeRecord[] store pays (a helper call that costs more than the rest of Push).
    private readonly Slot[] _items = new Slot[Capacity];
    private int _count;

    private struct Slot
    {
        public NativeRecord? Handle;
    }

    public bool TryPop(out NativeRecord handle)
    {
        int count = _count - 1;
        var items = _items;
        if ((uint)count < (uint)items.Length)
        {
            ref Slot slot = ref items[count];
            handle = slot.Handle!;
            slot.Handle = null; // the stack holds no reference to a handle in use
            _count = count;
            return true;
        }
        handle = null!;
        return false;
    }

    public void Push(NativeRecord handle)
    {
        int count = _count;
        var items = _items;
        if ((uint)count < (uint)items.Length)
        {
            items[count].Handle = handle;
            _count = count + 1;
        }
        // Full: drop it, the GC takes it.
    }
}
