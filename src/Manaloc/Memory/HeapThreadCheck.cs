using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// The thread test of a held heap (<see cref="TypeAllocator.ThreadHeap"/>, <see cref="NativeSlabAllocator.ThreadHeap"/>):
/// is the calling thread the heap's owner? A heap's free lists are single-threaded (no atomics on the hot path), so a
/// second thread must be refused before it touches one, on its first call.
/// </summary>
/// <remarks>
/// <para>Exact and cheap: each thread gets a key of its own, a 64-bit number from a process-wide counter (never reused,
/// unlike managed thread ids), in a [ThreadStatic] <see langword="long"/> (<see cref="ThreadKeys"/>); a heap keeps its owner's key and compares it with
/// the calling thread's. A thread-static of a primitive type is read at an address the JIT computes with one call (on
/// Linux x64 the C library's <c>__tls_get_addr</c>) and an add, then one load and one compare.
/// <see cref="Thread.CurrentThread"/> and a [ThreadStatic] object reference add loads through the thread's table of
/// managed statics, which the JIT neither hoists nor shares between a New and a Delete once the loop writes memory;
/// <see cref="Environment.CurrentManagedThreadId"/> is a call into the runtime. What each costs per pair is in
/// docs/memory.md (HeapThreadCheckBenchmarks measures it).</para>
/// <para>Memory ordering: the owner's key is a readonly field written by the heap's constructor on the owner's thread.
/// Another thread reaches the heap only through the user's publication of it, and the .NET memory model orders a
/// constructor's stores before that publication, so no thread sees the field unset (and a thread that has no key of its
/// own reads 0, which is no owner's key: refused). Each thread reads and writes only its own key.</para>
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

    /// <summary>The calling thread's key, made on first use: a heap's owner.</summary>
    internal static long CurrentKey => ThreadKeys.Key != 0 ? ThreadKeys.Key : ThreadKeys.NextKey();

    /// <summary>True when the calling thread is not the one whose key is <paramref name="ownerKey"/> (in the sampled mode: only on a sampled call).</summary>
    /// <remarks>A thread that never asked for a key reads 0, which no owner has.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsForeign(long ownerKey, ref uint calls)
    {
        if (Sampled) return ++calls % SampleInterval == 0 && ThreadKeys.Key != ownerKey;
        return ThreadKeys.Key != ownerKey;
    }
}
