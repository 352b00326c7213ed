using System.Runtime.InteropServices;
using Manaloc.Lab.Harness;
using Manaloc.Memory;

namespace Manaloc.Lab.Experiments;

/// <summary>The allocators under test, the loop-only floor, and the measured churn loop.</summary>
public sealed unsafe partial class HeapContention
{
    /// <summary>One allocator under test; a struct type argument, so each variant's loop is compiled separately and the calls inline.</summary>
    private interface IHeap
    {
        /// <summary>Called by each thread before its loop (a per-thread heap binds to the thread here).</summary>
        void Attach();
        void* Alloc(nuint size);
        void Free(void* p);
    }

    private readonly struct MallocHeap : IHeap
    {
        public void Attach() { }
        public void* Alloc(nuint size) => NativeMemory.Alloc(size);
        public void Free(void* p) => NativeMemory.Free(p);
    }

    private readonly struct HGlobalHeap : IHeap
    {
        public void Attach() { }
        public void* Alloc(nuint size) => (void*)Marshal.AllocHGlobal((nint)size);
        public void Free(void* p) => Marshal.FreeHGlobal((nint)p);
    }

    /// <summary>The slab through its allocator-wide calls (a thread-static lookup per call): frees the blocks left at the end, from any thread.</summary>
    private readonly struct SlabHeap(NativeSlabAllocator slab) : IHeap
    {
        public void Attach() { }
        public void* Alloc(nuint size) => slab.Allocate(size);
        public void Free(void* p) => slab.Free(p);
    }

    /// <summary>The slab as a performance-minded caller uses it: each thread holds its <see cref="NativeSlabAllocator.ThreadHeap"/>.</summary>
    private struct SlabThreadHeap(NativeSlabAllocator slab) : IHeap
    {
        private NativeSlabAllocator.ThreadHeap? _heap;

        // Each worker thread attaches its own copy of this struct and only that thread calls Alloc and Free.
#pragma warning disable MNL107 // the field belongs to one thread's copy of the struct
        public void Attach() => _heap = slab.GetThreadHeap();
#pragma warning restore MNL107
        public readonly void* Alloc(nuint size) => _heap!.Allocate(size);
        public readonly void Free(void* p) => _heap!.Free(p);
    }

    /// <summary>
    /// The loop-only variant's "heap": hands each thread the same block of its own every time and frees
    /// nothing. The blocks sit 128 bytes apart, so two threads' touches do not share a cache line; one
    /// block always hot in cache makes the floor, if anything, a little low (the allocators' net figures
    /// a little high).
    /// </summary>
    private sealed class FloorBuffers : IDisposable
    {
        private const int Stride = 128;
        private readonly byte* _memory;
        private readonly int _threads;

        public FloorBuffers(int threads)
        {
            _threads = threads;
            _memory = (byte*)NativeMemory.AlignedAlloc((nuint)(threads * Stride), Stride);
        }

        public LoopOnlyHeap HeapOf(int thread) => (uint)thread < (uint)_threads
            ? new LoopOnlyHeap(_memory + thread * Stride)
            : throw new ArgumentOutOfRangeException(nameof(thread), thread, $"Only {Format.Count(_threads, "thread")} {(_threads == 1 ? "has" : "have")} a block.");

        public void Dispose() => NativeMemory.AlignedFree(_memory);
    }

    private readonly struct LoopOnlyHeap(byte* block) : IHeap
    {
        public void Attach() { }
        public void* Alloc(nuint size) => block;
        public void Free(void* p) { }
    }

    private static Measurement Measure<THeap, TRelease>(
        ExperimentContext context, RunSettings settings, string variant, int threads, IReadOnlyDictionary<string, string> p, Func<int, THeap> heapOf, TRelease release)
        where THeap : struct, IHeap
        where TRelease : struct, IHeap
    {
        var slots = new nint[threads][];
        var states = new ulong[threads];
        var heaps = new THeap[threads];
        for (int t = 0; t < threads; t++)
        {
            slots[t] = new nint[Slots];
            states[t] = 0x9E3779B97F4A7C15UL * (ulong)(t + 1);
            heaps[t] = heapOf(t);
        }
        // A fixed operation count per sample: calibration on a loaded machine can pick counts so small
        // that waking the threads dominates.
        long total = context.IsSmoke ? 20_000 : context.IsQuick ? 600_000 : 6_000_000;
        // Each thread's CPU time for its last call (the sample; the warm-up calls come first): time the thread ran, not
        // time it waited for a core another process had, which on a shared machine swamps the difference under test.
        var cpu = new long[threads];
        var perThread = new long[threads];
        var m = ThreadSweep.Measure(variant, threads, (t, n) =>
        {
            long start = ThreadCpuTime.NowNanoseconds();
            Churn(heaps[t], slots[t], ref states[t], n);
            cpu[t] = ThreadCpuTime.NowNanoseconds() - start;
            perThread[t] = n;
        }, settings, p, totalOperations: total);
        if (ThreadCpuTime.IsAvailable)
        {
            m = m with { Metrics = new Dictionary<string, double>(m.Metrics) { [CpuNsPerOpMetric] = (double)cpu.Sum() / perThread.Sum() } };
        }
        // On this thread, through a heap that frees from any thread (a thread heap is its own thread's only).
        for (int t = 0; t < threads; t++) Release(release, slots[t]);
        return m;
    }

    /// <summary>n operations: pick a random slot; free its buffer if it has one, else allocate a random size.</summary>
    private static void Churn<THeap>(THeap heap, nint[] mine, ref ulong stateRef, long n) where THeap : struct, IHeap
    {
        heap.Attach();
        ulong state = stateRef;
        for (long i = 0; i < n; i++)
        {
            // xorshift64: no allocation, no shared state.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            int slot = (int)(state % Slots);
            nint p = mine[slot];
            if (p != 0)
            {
                heap.Free((void*)p);
                mine[slot] = 0;
            }
            else
            {
                nuint size = (nuint)(MinSize + (int)((state >> 32) % (MaxSize - MinSize + 1)));
                byte* block = (byte*)heap.Alloc(size);
                block[0] = 1; // touch it, as a user would
                mine[slot] = (nint)block;
            }
        }
        stateRef = state;
    }

    private static void Release<THeap>(THeap heap, nint[] mine) where THeap : struct, IHeap
    {
        for (int i = 0; i < mine.Length; i++)
        {
            if (mine[i] != 0) heap.Free((void*)mine[i]);
            mine[i] = 0;
        }
    }
}
