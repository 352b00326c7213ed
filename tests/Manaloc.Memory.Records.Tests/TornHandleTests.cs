using System.Runtime.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// A data race on an array of checked handles (safe code): one thread stores a handle and <c>default</c> in turn, another
/// reads the element and a field through it. The read must throw or succeed, never fault.
/// </summary>
public class TornHandleTests
{
    // Packed to 12 bytes (as the handles once were), one element in 16 had its address straddle a cache line, where the
    // 8-byte load and store are not atomic: this test then killed the test host within 5 s (AccessViolationException from a
    // torn, wild address). At 16 bytes an address is always 8-byte aligned; a race tears only between address and
    // generation, and the stamp check refuses the mix.
    [Fact]
    public unsafe void A_racy_read_of_a_handle_in_an_array_throws_or_succeeds_but_never_faults()
    {
        using var allocator = new Manaloc.Memory.TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var handles = GC.AllocateArray<FooDataRef>(64, pinned: true);
        byte* first = (byte*)Unsafe.AsPointer(ref handles[0]);
        // The element whose address field would straddle a cache line, if any can (none at 16 bytes: then the fourth).
        int straddling = Enumerable.Range(0, 64).Where(i => ((nint)(first + i * Unsafe.SizeOf<FooDataRef>()) & 63) > 56).DefaultIfEmpty(3).First();
        var live = FooDataRef.New(heap);
        live.Count = 5;
        bool stop = false;
        var writer = new Thread(() =>
        {
            while (!Volatile.Read(ref stop))
            {
                handles[straddling] = live;
                handles[straddling] = default;
            }
        });
        writer.Start();
        long read = 0, refused = 0;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        // At least 2 s of racing, and on until both outcomes were seen (a starved writer on a loaded host), 30 s at most.
        while ((clock.ElapsedMilliseconds < 2000 || read == 0 || refused == 0) && clock.ElapsedMilliseconds < 30_000)
        {
            try
            {
                if (handles[straddling].Count == 5) read++;
            }
            catch (InvalidOperationException)
            {
                refused++; // default (or a torn mix that the stamp refuses)
            }
        }
        Volatile.Write(ref stop, true);
        writer.Join();
        Assert.True(read > 0 && refused > 0, $"{read} reads, {refused} refusals");
        live.Delete(heap);
    }
}
