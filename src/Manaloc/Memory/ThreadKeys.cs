namespace Manaloc.Memory;

/// <summary>
/// The calling thread's numbers: its key (unique in the process, never reused: <see cref="HeapThreadCheck"/>'s owner
/// test and the owner of a record array's per-thread view), its index (small, reused once the thread has exited:
/// <see cref="ThreadIndex"/>, where a record array keeps the thread's view), and the record array whose view it moved last
/// (<see cref="ViewArray"/>, <see cref="ViewHandle"/>: a record array's move finds the thread's view there).
/// </summary>
/// <remarks>All are [ThreadStatic] primitives of one class with no static constructor and no static initializer: no
/// class-initialization test stands between the JIT and them, and a method that reads several (a record array's move reads
/// the last array's key and handle) gets the thread's static block once. A thread-static of a primitive type is read at an
/// address the JIT gets from one helper call (the thread's block) and an offset, then one load; a [ThreadStatic] object
/// reference or <see cref="Thread.CurrentThread"/> add loads through the thread's table of managed statics, and
/// <see cref="Environment.CurrentManagedThreadId"/> is a call into the runtime. Each thread reads and writes only its own
/// fields.</remarks>
internal static class ThreadKeys
{
    /// <summary>The calling thread's key (0 until <see cref="NextKey"/> first runs on the thread; then unique in the process).</summary>
    [ThreadStatic]
    internal static long Key;

    /// <summary>The calling thread's index (0 until <see cref="ThreadIndex.Acquire"/> first runs on the thread).</summary>
    [ThreadStatic]
    internal static int Index;

    /// <summary>The key of the record array whose view <see cref="ViewHandle"/> holds (0: none yet). Array keys come from
    /// <see cref="NextArrayKey"/>: never reused, never 0 or negative.</summary>
    [ThreadStatic]
    internal static long ViewArray;

    /// <summary>A weak GC handle (<see cref="System.Runtime.InteropServices.WeakGCHandle{T}.ToIntPtr"/>) to the calling
    /// thread's view of the array <see cref="ViewArray"/> names: a number, so the thread keeps neither the array, its views
    /// nor its memory alive. The array frees it once the array is unreachable (see <see cref="RecordArray{T}"/>).</summary>
    [ThreadStatic]
    internal static nint ViewHandle;

    private static long s_lastKey;
    private static long s_lastArrayKey;

    /// <summary>Gives the calling thread its key.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    internal static long NextKey() => Key = Interlocked.Increment(ref s_lastKey); // atomicity only: unique keys, orders nothing

    /// <summary>A new record array's key: unique in the process, never reused, at least 1.</summary>
    internal static long NextArrayKey() => Interlocked.Increment(ref s_lastArrayKey); // atomicity only, as NextKey
}
