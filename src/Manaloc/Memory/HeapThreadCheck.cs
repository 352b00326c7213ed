using System.Runtime.CompilerServices;


namespace Manaloc.Memory;

/// <summary>
/// The thread test of a held heap (<see cref="TypeAllocator.ThreadHeap"/>, <see cref="NativeSlabAllocator.ThreadHeap"/>):
/// is the calling thread the heap's owner? A heap's free lists are single-threaded (no atomics on the hot path), so a
/// second thread must be refused before it touches one, on its first call.
/// </summary>
/// <remarks>
/// <para>Exact and cheap: <see cref="Thread.CurrentThread"/> is a thread-static the JIT reads inline (an fs-relative TLS
/// load on Linux x64, hoisted out of a loop), compared with the owner's <see cref="Thread"/> object. The object, not the
/// managed thread id: ids are reused after a thread exits, objects are not while the heap references its owner's. Measured
/// against <see cref="Environment.CurrentManagedThreadId"/>, a call into the runtime (about 4–5 ns on Linux x64, which
/// is why the check used to be sampled).</para>
/// <para><see cref="Sampled"/> brings back the sampled check (one call in <see cref="SampleInterval"/>) for the
/// benchmarks' same-run comparison only: an AppContext switch read once, so the JIT folds the test away.</para>
/// </remarks>
internal static class HeapThreadCheck
{
    /// <summary>In the sampled check (benchmarks only), one call in this many tests the thread.</summary>
    internal const int SampleInterval = 64;

    /// <summary>The AppContext switch that selects the sampled check, for the benchmarks' A/B only.</summary>
    internal const string SampledSwitch = "Manaloc.Memory.ThreadHeap.SampledThreadCheckForBenchmarks";

    /// <summary>Read once per process: a JIT constant in optimized code.</summary>
    internal static readonly bool Sampled = AppContext.TryGetSwitch(SampledSwitch, out bool on) && on;

    // Not beforefieldinit: the switch is read at the first use of a heap, never earlier, so a benchmark's setup can set it.
    static HeapThreadCheck() { }

    /// <summary>True when the calling thread is not <paramref name="owner"/> (in the sampled mode: only on a sampled call).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsForeign(Thread owner, ref uint calls)
    {
        if (Sampled) return ++calls % SampleInterval == 0 && Thread.CurrentThread != owner;
        return Thread.CurrentThread != owner;
    }
}
