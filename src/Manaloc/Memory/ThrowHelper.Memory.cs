using System.Diagnostics.CodeAnalysis;
using Manaloc.Memory.CompilerServices;

namespace Manaloc;

/// <summary>
/// Throwing for the Memory area lives here, so that allocation, free and the generated accessors
/// stay small enough to inline: the hot path pays one compare and a call that never returns.
/// </summary>
internal static partial class ThrowHelper
{
    [DoesNotReturn]
    public static void ThrowDisposed(string what) => throw Disposed(what);

    /// <summary>The exception <see cref="ThrowDisposed"/> throws, for a caller whose own body must end in <c>throw</c>: the
    /// JIT then knows a call to that caller never returns, and keeps nothing of the hot path alive across it.</summary>
    public static ObjectDisposedException Disposed(string what)
        => new(what, $"The {what} has been disposed; its memory was freed.");

    /// <summary>A held thread heap used on a thread other than its owner: <paramref name="allocator"/> names the allocator (kind and Name).</summary>
    [DoesNotReturn]
    public static void ThrowWrongThread(string allocator, Thread owner)
    {
        var caller = Thread.CurrentThread;
        throw new InvalidOperationException(
            $"{allocator}: this ThreadHeap belongs to managed thread {Describe(owner)}, but managed thread {Describe(caller)} used it; "
            + "nothing was allocated or freed. A held heap is bound to the thread that got it: get one per thread with GetThreadHeap, "
            + "and do not hold one across an await (the continuation may resume on another thread; get the heap again after it).");

        static string Describe(Thread thread) => thread.Name is { } name ? $"{thread.ManagedThreadId} ('{name}')" : thread.ManagedThreadId.ToString(System.Globalization.CultureInfo.InvariantCulture);
    }

    [DoesNotReturn]
    public static void ThrowNotOurs(string paramName, string message)
        => throw new ArgumentException(message, paramName);

    [DoesNotReturn]
    public static void ThrowIndexOutOfRange(int index, int length)
        => throw new ArgumentOutOfRangeException(nameof(index), index, $"The index must be in [0, {length}).");

    [DoesNotReturn]
    public static void ThrowOtherRecordType(string paramName)
        => throw new ArgumentException("The handle is of a record of another size: it is not a handle of this record type.", paramName);

    [DoesNotReturn]
    public static void ThrowNotRegistered(Type type)
        => throw new InvalidOperationException($"'{type.FullName}' is not the registration of a [NativeRecord] interface: only the Manaloc source generator's structs are.");

    [DoesNotReturn]
    public static void ThrowOutOfMemory(nuint size)
        => throw new OutOfMemoryException($"The native allocation of {Plural.Of(size, "byte")} failed.");
}
