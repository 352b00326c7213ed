namespace Manaloc.Memory;

/// <summary>
/// The calling thread's two numbers: its key (unique in the process, never reused: <see cref="HeapThreadCheck"/>'s owner
/// test, a record array's creator and the owner of a per-thread view) and its index (small, reused once the thread has
/// exited: <see cref="ThreadIndex"/>, where a record array finds the thread's view).
/// </summary>
/// <remarks>Both are [ThreadStatic] primitives of one class with no static constructor and no static initializer: no
/// class-initialization test stands between the JIT and them, and a method that reads both (a record array's move on a
/// thread other than its creator) gets the thread's static block once. A thread-static of a primitive type is read at an
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

    private static long s_lastKey;

    /// <summary>Gives the calling thread its key.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    internal static long NextKey() => Key = Interlocked.Increment(ref s_lastKey); // atomicity only: unique keys, orders nothing
}
