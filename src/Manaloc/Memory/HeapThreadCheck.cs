using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// The thread test of a held heap (<see cref="TypeAllocator.ThreadHeap"/>, <see cref="NativeSlabAllocator.ThreadHeap"/>):
/// is the calling thread the heap's owner? A heap's free lists are single-threaded (no atomics on the hot path), so a
/// second thread must be refused before it touches one, on its first call.
/// </summary>
/// <remarks>
/// <para>Exact: <see cref="Thread.CurrentThread"/>, a thread-static the JIT reads inline (on Linux x64 a call to the C
/// library's <c>__tls_get_addr</c> and four dependent loads), compared with the owner's <see cref="Thread"/> object. The
/// object, not the managed thread id: ids are reused after a thread exits, objects are not while the heap references its
/// owner's. <see cref="Environment.CurrentManagedThreadId"/> is a call into the runtime, dearer (4–5 ns measured). A
/// [ThreadStatic] of our own compiles to the same code (seen in the disassembly). The JIT neither hoists the read out of a
/// caller's loop nor shares it between a New and a Delete (the loop writes memory), so a pair pays two.</para>
/// <para>Memory ordering: the owner is a readonly field written by the heap's constructor on the owner's thread. Another
/// thread reaches the heap only through the user's publication of it, and the .NET memory model orders a constructor's
/// stores before that publication; a thread that saw the field unset would see null, which is no thread: refused too.
/// The owner's own reads need no ordering.</para>
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
