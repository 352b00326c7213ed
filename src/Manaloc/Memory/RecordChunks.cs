using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Manaloc.Memory;

/// <summary>
/// The process-wide home of every class chunk that a <see cref="TypeAllocator"/>'s slab ever used: its native memory
/// is never given back to the system. An empty chunk, and every chunk of a disposed allocator, waits here, per size
/// class, for the next TypeAllocator that needs one.
/// </summary>
/// <remarks>
/// <para>Why: a struct handle (<see cref="RecordRef"/>, and the generated handles' <see cref="CompilerServices.RecordRef{TRecord}"/>)
/// is an address and a generation with no managed reference, so nothing tells the GC that its block's memory is still read. Its check reads the slot's stamp
/// in the block's trailer; that read is safe for ever only if the memory stays mapped and the slot stays a slot of the
/// same size class. So a chunk keeps its class for the life of the process and is reused, never freed. The cost: the
/// process keeps the peak of its record chunks (128 KiB each) as address space; on Linux a pooled chunk's pages (all but
/// its header's) go back to the kernel (<c>madvise(MADV_DONTNEED)</c>: they read as zeros, which is a free stamp),
/// so it holds no memory until it is reused.</para>
/// <para>Generations stay fresh across lives: when a chunk is reused, every slot ever carved gets the same even stamp,
/// the floor, above every stamp the chunk ever held, so no old handle's generation (odd, at most the old maximum)
/// matches a new one. Each life records its floor and owner, so a stale handle can still say whether its allocator was
/// disposed (<see cref="WasDisposed"/>).</para>
/// <para>Records larger than the largest class (8 KB) live the same way: each in a block of its own with a
/// <see cref="LargeTrailer"/> at its end, pooled by length and alignment, never freed.</para>
/// <para>Chunk header (the first 64 bytes of the chunk, see <see cref="SizeClasses.ChunkHeader"/>): int 0 the owner's
/// chunk id, int 1 the size class, int 2 the home id here, int 3 the slots ever carved, long at byte 16 the owner's token
/// (<see cref="NativeSlabAllocator.RecordToken"/>), which Delete compares to find a foreign or stale handle with one load.</para>
/// <para>Thread safety: the home table grows under <see cref="s_lock"/> and is published with a volatile write, entries
/// are never removed; a home's lives change under its own lock; the pool per class is guarded by <see cref="s_lock"/>.</para>
/// </remarks>
internal static unsafe class RecordChunks
{
    /// <summary>Lives remembered per chunk for messages; a handle older than these gets the generic message.</summary>
    private const int LivesKept = 16;

    private static readonly object s_lock = new();
    private static Home?[] s_homes = new Home?[64];
    private static int s_homeCount;
    private static readonly Stack<Home>[] s_pool = CreatePool();
    private static readonly Dictionary<(nuint Length, nuint Alignment), Stack<Home>> s_largePool = [];
    private static long s_pooledBytes;

    /// <summary>Bytes of record chunks waiting in the pool (statistics).</summary>
    public static long PooledBytes => Interlocked.Read(ref s_pooledBytes);

    /// <summary>One chunk's memory, for the life of the process.</summary>
    internal sealed class Home(int id, byte* memory, int classIndex, nuint length, nuint alignment)
    {
        public readonly int Id = id;
        public readonly byte* Memory = memory;
        /// <summary>The size class of a class chunk; -1 for a large record's block.</summary>
        public readonly int ClassIndex = classIndex;
        /// <summary>Bytes of memory: the chunk size, or a large record's block with its trailer.</summary>
        public readonly nuint Length = length;
        public readonly nuint Alignment = alignment;
        /// <summary>While pooled: the even stamp every slot ever carved gets when the chunk is taken again (above all it held).</summary>
        public uint Floor;
        /// <summary>Newest last; guarded by lock (this).</summary>
        public readonly List<Life> Lives = [];
    }

    /// <summary>One owner's use of a chunk: generations above <see cref="Floor"/> (until the next life's floor) are its.</summary>
    internal sealed class Life(uint floor, NativeSlabAllocator owner)
    {
        public readonly uint Floor = floor;
        /// <summary>The TypeAllocator's name (its slab's, less the suffix).</summary>
        public readonly string OwnerName = OwnerNameOf(owner);
        /// <summary>Set before the owner's Dispose invalidates its stamps.</summary>
        public volatile bool OwnerDisposed;
    }

    /// <summary>The name of the TypeAllocator that owns <paramref name="slab"/>: the slab's name, less the suffix.</summary>
    public static string OwnerNameOf(NativeSlabAllocator slab)
        => slab.Name.EndsWith(MemoryMetrics.TypeAllocatorSuffix, StringComparison.Ordinal) ? slab.Name[..^MemoryMetrics.TypeAllocatorSuffix.Length] : slab.Name;

    /// <summary>
    /// Memory for a new chunk of class <paramref name="classIndex"/> owned by <paramref name="owner"/>: a pooled chunk
    /// (its carved slots raised to a fresh floor) or a new allocation. Writes the header except the owner's chunk id.
    /// </summary>
    public static byte* Take(NativeSlabAllocator owner, int classIndex, out Home home, out Life life, out int carvedBefore)
    {
        Home? pooled = null;
        lock (s_lock)
        {
            if (s_pool[classIndex].TryPop(out var h))
            {
                pooled = h;
                s_pooledBytes -= SizeClasses.ChunkSize;
            }
        }
        uint floor = 0;
        if (pooled is null)
        {
            byte* memory = (byte*)NativeMemory.AlignedAlloc(SizeClasses.ChunkSize, SizeClasses.ChunkSize);
            if (memory == null) ThrowHelper.ThrowOutOfMemory(SizeClasses.ChunkSize);
            lock (s_lock)
            {
                pooled = AddHome(memory, classIndex, SizeClasses.ChunkSize, SizeClasses.ChunkSize);
            }
            ((int*)memory)[1] = classIndex;
            ((int*)memory)[2] = pooled.Id;
            ((int*)memory)[3] = 0;
        }
        else
        {
            floor = pooled.Floor;
            ApplyFloor(pooled, floor);
        }
        home = pooled;
        life = StartLife(home, floor, owner);
        *(long*)(home.Memory + 16) = owner.RecordToken;
        carvedBefore = ((int*)home.Memory)[3];
        return home.Memory;
    }

    // Called under s_lock.
    private static Home AddHome(byte* memory, int classIndex, nuint length, nuint alignment)
    {
        var home = new Home(s_homeCount, memory, classIndex, length, alignment);
        if (s_homeCount == s_homes.Length)
        {
            var bigger = new Home?[s_homes.Length * 2];
            Array.Copy(s_homes, bigger, s_homes.Length);
            Volatile.Write(ref s_homes, bigger); // readers index below the count they found in a header or trailer
        }
        s_homes[s_homeCount++] = home;
        return home;
    }

    private static Life StartLife(Home home, uint floor, NativeSlabAllocator owner)
    {
        var life = new Life(floor, owner);
        lock (home)
        {
            home.Lives.Add(life);
            if (home.Lives.Count > LivesKept) home.Lives.RemoveAt(0);
        }
        return life;
    }

    /// <summary>Bytes a large record's trailer takes at the end of its block: home id (int at -24), owner token (long at -16), tag (at -8), stamp (at -4).</summary>
    public const int LargeTrailer = 24;

    /// <summary>
    /// A block of <paramref name="length"/> bytes (a large record and its <see cref="LargeTrailer"/>) for
    /// <paramref name="owner"/>: a pooled one of that length and alignment, or a new one. Its stamp (at length - 4) is even,
    /// above every generation it ever had; the trailer names its home and owner.
    /// </summary>
    public static byte* TakeLarge(NativeSlabAllocator owner, nuint length, nuint alignment, out Home home, out Life life)
    {
        Home? pooled = null;
        lock (s_lock)
        {
            if (s_largePool.TryGetValue((length, alignment), out var stack) && stack.TryPop(out var h))
            {
                pooled = h;
                s_pooledBytes -= (long)length;
            }
        }
        if (pooled is null)
        {
            byte* memory = (byte*)NativeMemory.AlignedAlloc(length, alignment);
            if (memory == null) ThrowHelper.ThrowOutOfMemory(length);
            *(ulong*)(memory + length - 8) = 0; // tag and stamp: a fresh block's first generation is 1
            lock (s_lock) pooled = AddHome(memory, -1, length, alignment);
            *(int*)(memory + length - LargeTrailer) = pooled.Id;
        }
        home = pooled;
        uint floor = home.Floor; // even: every new generation is above it
        *(uint*)(home.Memory + length - 4) = floor;
        life = StartLife(home, floor, owner);
        *(long*)(home.Memory + length - 16) = owner.RecordToken;
        return home.Memory;
    }

    /// <summary>A large record's block no longer used by its owner waits for the next record of its length.</summary>
    /// <remarks>As <see cref="Return"/>: its floor is its stamp (even), and the pages before its trailer go back to the kernel.</remarks>
    public static void ReturnLarge(Home home)
    {
        home.Floor = *(uint*)(home.Memory + home.Length - 4);
        Platform.LinuxNative.DiscardPages(home.Memory, home.Length - LargeTrailer);
        lock (s_lock)
        {
            if (!s_largePool.TryGetValue((home.Length, home.Alignment), out var stack)) s_largePool[(home.Length, home.Alignment)] = stack = new Stack<Home>();
            stack.Push(home);
            s_pooledBytes += (long)home.Length;
        }
    }

    /// <summary>The even stamp above every stamp the chunk's carved slots hold: old generations never match a new one.</summary>
    private static uint FloorOf(Home home)
    {
        int blockSize = SizeClasses.Sizes[home.ClassIndex];
        int carved = ((int*)home.Memory)[3];
        byte* blocks = home.Memory + SizeClasses.ChunkHeader;
        uint max = 0;
        for (int slot = 0; slot < carved; slot++) max = Math.Max(max, *(uint*)(blocks + (nint)slot * blockSize + blockSize - 4));
        return (max | 1) + 1; // wraps only after 2^31 generations of one slot
    }

    /// <summary>Every slot ever carved gets the floor (its pages may have been discarded, and read as zeros until now).</summary>
    private static void ApplyFloor(Home home, uint floor)
    {
        int blockSize = SizeClasses.Sizes[home.ClassIndex];
        int carved = ((int*)home.Memory)[3];
        byte* blocks = home.Memory + SizeClasses.ChunkHeader;
        for (int slot = 0; slot < carved; slot++) *(uint*)(blocks + (nint)slot * blockSize + blockSize - 4) = floor;
    }

    /// <summary>A chunk no longer used by its owner (empty, or the owner disposed) waits for the next one.</summary>
    /// <remarks>Its floor is taken first; then every page but the header's goes back to the kernel (Linux), so a pooled
    /// chunk holds address space, not memory. A stale handle meanwhile reads a zero stamp (even: free) and fails.</remarks>
    public static void Return(Home home, int carved)
    {
        Debug.Assert(home.ClassIndex >= 0, "a class chunk");
        if (carved > ((int*)home.Memory)[3]) ((int*)home.Memory)[3] = carved;
        home.Floor = FloorOf(home);
        Platform.LinuxNative.DiscardPages(home.Memory + SizeClasses.ChunkHeader, SizeClasses.ChunkSize - SizeClasses.ChunkHeader);
        lock (s_lock)
        {
            s_pool[home.ClassIndex].Push(home);
            s_pooledBytes += SizeClasses.ChunkSize;
        }
    }

    /// <summary>True when a record with this stamp offset has a block of its own (larger than the largest class) rather than a class block.</summary>
    public static bool IsLarge(int stampOffset) => stampOffset > SizeClasses.MaxSize - 4;

    /// <summary>What a failed check of a record's handle should say: the life its generation belongs to, if remembered.</summary>
    /// <returns>True when that life's owner was disposed; false when it was not or the life is no longer remembered.</returns>
    public static bool WasDisposed(byte* address, uint generation, int stampOffset, out string? ownerName)
    {
        ownerName = null;
        int id = IsLarge(stampOffset) ? *(int*)(address + stampOffset + 4 - LargeTrailer) : ((int*)SizeClasses.ChunkStart(address))[2];
        var homes = Volatile.Read(ref s_homes);
        if ((uint)id >= (uint)homes.Length || homes[id] is not { } home) return false;
        lock (home)
        {
            for (int i = home.Lives.Count - 1; i >= 0; i--)
            {
                var life = home.Lives[i];
                if (generation > life.Floor)
                {
                    ownerName = life.OwnerName;
                    return life.OwnerDisposed;
                }
            }
        }
        return false;
    }

    private static Stack<Home>[] CreatePool()
    {
        var pool = new Stack<Home>[SizeClasses.Count];
        for (int i = 0; i < pool.Length; i++) pool[i] = new Stack<Home>();
        Debug.Assert(SizeClasses.ChunkHeader >= 24, "the header holds four ints and the owner token");
        return pool;
    }
}
