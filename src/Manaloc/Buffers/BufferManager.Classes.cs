using System.Numerics;
using System.Runtime.CompilerServices;

namespace Manaloc.Buffers;

/// <summary>The size classes: which class serves a length, and what each class keeps.</summary>
public sealed partial class BufferManager
{
    /// <summary>The size class of a length: 0 for 1..16, 1 for 17..32, …; out of range for 0, negatives and huge lengths.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int SelectClass(int length) => BitOperations.Log2((uint)(length - 1) | (MinimumSize - 1)) - 3;

    /// <summary>
    /// What one size class keeps: <see cref="BufferManagerOptions.MaxRetainedBytesPerClass"/> worth of
    /// buffers (at most 4,096), of which a thread's stack holds up to
    /// <see cref="BufferManagerOptions.BuffersPerThread"/>. Classes up to 2 MiB keep at least
    /// BuffersPerThread; larger ones at least one (a 64 MiB class under the default 16 MiB cap keeps one
    /// in its stacks and shared tier), so a large rent after warm-up allocates nothing without
    /// retaining many copies.
    /// </summary>
    internal static (int Retained, int PerThread, int Batch) ClassLimits(BufferManagerOptions options, int size)
    {
        long byBytes = options.MaxRetainedBytesPerClass / size;
        int floor = size <= LargeClassBytes ? options.BuffersPerThread : 1;
        int retained = (int)Math.Clamp(byBytes, floor, 4096);
        int perThread = Math.Min(options.BuffersPerThread, retained);
        return (retained, perThread, Math.Min(options.BatchSize, perThread));
    }

    /// <summary>Classes above this size may keep fewer than BuffersPerThread buffers (down to one) when the byte cap says so.</summary>
    private const int LargeClassBytes = 1 << 21;
}
