using System.Runtime.CompilerServices;

namespace Manaloc.Generators.Tests;

/// <summary>
/// A data race on an array of checked handles (safe code): one thread stores a handle and <c>default</c> in turn, another
/// reads the element and a field through it. The read must throw or succeed, never fault.
/// </summary>
public class TornHandleTests
{
    [Fact(Skip = "Open: kills the test host. Packed to 4 bytes, a 12-byte handle's address straddles a cache line in one array "
        + "element in 16, where the 8-byte load and store are not atomic: a torn read mixes the halves of two addresses and the "
        + "stamp check reads a wild one (AccessViolationException, process aborted, within 5 s here). 16-byte handles "
        + "(RecordRef) only tear between fields and throw.")]
    public unsafe void A_racy_read_of_a_handle_in_an_array_throws_or_succeeds_but_never_faults()
    {
        using var allocator = new Manaloc.Memory.TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var handles = GC.AllocateArray<FooDataRef>(64, pinned: true);
        byte* first = (byte*)Unsafe.AsPointer(ref handles[0]);
        int straddling = Enumerable.Range(0, 64).First(i => ((nint)(first + i * Unsafe.SizeOf<FooDataRef>()) & 63) > 56);
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
        while (clock.ElapsedMilliseconds < 5000)
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
