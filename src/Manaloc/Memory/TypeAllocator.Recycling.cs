using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

public sealed unsafe partial class TypeAllocator
{
    /// <summary>
    /// Gives the calling thread's cached native blocks back to the shared lists and drops its recycled
    /// handles: call it before a thread that used this allocator ends.
    /// </summary>
    /// <remarks>Thread-safe; affects only the calling thread's cache. Does nothing after Dispose.</remarks>
    public void FlushThreadCache() => _slab.FlushThreadCache();

    /// <summary>
    /// With <see cref="TypeAllocatorOptions.RecycleHandles"/>: the calling thread's deleted handle of the
    /// record's type, if it kept one.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool TryReuseHandle(NativeSlabAllocator.ThreadCache cache, RecordType record, out NativeRecord handle)
    {
        var stacks = cache.Handles;
        if (stacks is not null && (uint)record.Index < (uint)stacks.Length && stacks[record.Index] is { } stack)
        {
            return stack.TryPop(out handle);
        }
        handle = null!;
        return false;
    }

    /// <summary>Keeps a deleted handle for the calling thread's next New of its type (bounded per type and thread).</summary>
    /// <remarks>A parked handle holds no pointer: a stale use faults on null instead of touching the freed block,
    /// IsAllocated is false, and a second Delete says "already deleted".</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void KeepHandle(NativeSlabAllocator.ThreadCache cache, NativeRecord handle, int index)
    {
        handle.Address = null;
        var stacks = cache.Handles;
        if (stacks is not null && (uint)index < (uint)stacks.Length && stacks[index] is { } stack) stack.Push(handle);
        else KeepHandleSlow(cache, handle, index);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void KeepHandleSlow(NativeSlabAllocator.ThreadCache cache, NativeRecord handle, int index)
    {
        var stacks = cache.Handles;
        if (stacks is null || index >= stacks.Length)
        {
            Array.Resize(ref stacks, Math.Max(index + 1, 2 * (stacks?.Length ?? 4)));
            cache.Handles = stacks;
        }
        (stacks[index] ??= new HandleStack()).Push(handle);
    }
}
