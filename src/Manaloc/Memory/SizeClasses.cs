using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// The size classes of <see cref="NativeSlabAllocator"/>: multiples of 16 up to 128, then four
/// classes per power of two up to <see cref="MaxSize"/>. Blocks of a class are carved from
/// <see cref="ChunkSize"/>-byte chunks aligned to their own size, after a 64-byte header, so a
/// block of class size s is aligned to min(64, the largest power of two dividing s).
/// </summary>
internal static class SizeClasses
{
    /// <summary>Bytes in one chunk; chunks are aligned to this, so a block finds its chunk by masking.</summary>
    public const int ChunkSize = 128 * 1024;
    /// <summary>Bytes of chunk header before the first block (one cache line).</summary>
    public const int ChunkHeader = 64;
    /// <summary>The largest class; anything larger goes straight to NativeMemory.AlignedAlloc.</summary>
    public const int MaxSize = 8192;
    /// <summary>Largest alignment a class block can guarantee.</summary>
    public const int MaxClassAlignment = 64;

    public static readonly int[] Sizes =
    [
        16, 32, 48, 64, 80, 96, 112, 128,
        160, 192, 224, 256, 320, 384, 448, 512,
        640, 768, 896, 1024, 1280, 1536, 1792, 2048,
        2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
    ];

    /// <summary>Blocks moved between a thread cache and the shared lists at once, per class.</summary>
    public static readonly int[] BatchSizes = BuildBatches();

    // Class index for sizes 0..1024 by (size + 15) / 16.
    private static readonly byte[] s_small = BuildSmall();

    public static int Count => Sizes.Length;

    /// <summary>The start of the chunk a class block lies in (chunks are aligned to their size): where its header is.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static unsafe byte* ChunkStart(void* block) => (byte*)((nuint)block & ~(nuint)(ChunkSize - 1));

    /// <summary>Sizes up to this many bytes (at 16-byte alignment) find their class with one table load (<see cref="ForSmall"/>).</summary>
    public const int SmallLimit = 1024;

    /// <summary>The class for <paramref name="size"/> ≤ <see cref="SmallLimit"/> bytes at 16-byte alignment: one table load, inlined into the allocation path.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ForSmall(nuint size)
    {
        Debug.Assert(size <= SmallLimit, "only small sizes");
        return s_small[(int)((size + 15) >> 4)];
    }

    /// <summary>The class for <paramref name="size"/> bytes aligned to <paramref name="alignment"/> (a power of two), or -1 when too large.</summary>
    public static int ForSize(nuint size, nuint alignment = 16)
    {
        if (alignment <= 16 && size <= SmallLimit)
        {
            return ForSmall(size);
        }
        if (size > MaxSize || alignment > MaxClassAlignment)
        {
            return -1;
        }
        for (int i = 0; i < Sizes.Length; i++)
        {
            if ((nuint)Sizes[i] >= size && ((nuint)Sizes[i] & (alignment - 1)) == 0)
            {
                return i;
            }
        }
        return -1;
    }

    /// <summary>Alignment every block of class <paramref name="classIndex"/> has.</summary>
    public static int AlignmentOf(int classIndex)
        => Math.Min(MaxClassAlignment, 1 << BitOperations.TrailingZeroCount(Sizes[classIndex]));

    private static byte[] BuildSmall()
    {
        var table = new byte[65];
        int cls = 0;
        for (int i = 0; i < table.Length; i++)
        {
            int size = i * 16;
            while (Sizes[cls] < size) cls++;
            table[i] = (byte)cls;
        }
        return table;
    }

    private static int[] BuildBatches()
    {
        var batches = new int[Sizes.Length];
        for (int i = 0; i < batches.Length; i++)
        {
            batches[i] = Math.Clamp(16 * 1024 / Sizes[i], 4, 64);
        }
        return batches;
    }
}
