using System.Runtime.CompilerServices;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>
/// A record array disposed on one thread while another reads or writes it: the other thread may see the dead array or an
/// exception, but never memory handed to someone else (the next array), and the process never faults.
/// </summary>
public sealed class RecordArrayDisposeRaceTests
{
    private const int Marker = -1;

    /// <summary>Runs <paramref name="writer"/> on another thread until it throws, disposes the array under it, then makes
    /// the next array and checks that no stale write reached it. Returns in how many tries the writer ran across the Dispose:
    /// it ended (by the exception a disposed array gives, or by returning once it saw the array dead) after Dispose began.</summary>
    private static int Race(bool isChecked, int records, int tries, Action<RecordArray<IFooData>> writer)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        int overlapped = 0;
        for (int attempt = 0; attempt < tries; attempt++)
        {
            var array = allocator.NewArray<IFooData>(records);
            using var started = new ManualResetEventSlim();
            int disposing = 0, endedAfterDispose = 0;
            var thread = new Thread(() =>
            {
                started.Set();
                try
                {
                    writer(array);
                }
                catch (ObjectDisposedException)
                {
                }
                catch (InvalidOperationException)
                {
                }
                // Full fences on both sides: a writer that ended because it saw the Dispose's effect, which the main thread
                // made after its fenced write of `disposing`, reads 1 here; a writer that ended before the Dispose began
                // reads 0. (Thread.IsAlive would also count a thread that had stopped writing but not yet exited.)
                endedAfterDispose = Interlocked.CompareExchange(ref disposing, 0, 0);
            });
            thread.Start();
            started.Wait();
            Thread.SpinWait(200 + attempt % 7 * 50);
            Interlocked.Exchange(ref disposing, 1);
            array.Dispose();
            // Same thread as the Dispose: with immediate reuse, its cache hands the freed block straight back.
            var next = allocator.NewArray<IFooData>(records);
            thread.Join();
            overlapped += endedAfterDispose; // Join orders the thread's write before this read
            int corrupted = 0;
            foreach (var record in next.Scan())
            {
                if (record.Bar != 0) corrupted++;
            }
            Assert.True(corrupted == 0, $"try {attempt}: {corrupted} records of the next array were written by the stale writer");
            next.Dispose();
        }
        return overlapped;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_scanning_writer_racing_Dispose_never_writes_into_the_next_array(bool isChecked)
    {
        int overlapped = Race(isChecked, 64, 300, array =>
        {
            while (true)
            {
                foreach (var record in array.Scan()) record.Bar = Marker;
            }
        });
        Assert.True(overlapped > 0, "the writer never ran across a Dispose: the test proved nothing");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void An_item_writer_racing_Dispose_never_writes_into_the_next_array(bool isChecked)
    {
        int overlapped = Race(isChecked, 64, 300, array =>
        {
            while (true)
            {
                foreach (var record in array) record.Bar = Marker;
            }
        });
        Assert.True(overlapped > 0, "the writer never ran across a Dispose: the test proved nothing");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Saved_items_written_after_Dispose_never_reach_the_next_array(bool isChecked)
    {
        // Unchecked items are bare, so they keep writing after Dispose (into the dead array, which they keep alive); checked
        // ones throw at the first write after it. Either way the next array, made at once, stays zero.
        int overlapped = Race(isChecked, 64, 100, array =>
        {
            var items = array.ToList();
            while (true)
            {
                bool wasAlive = array.IsAllocated;
                foreach (var item in items) item.Bar = Marker;
                if (!wasAlive) return; // one whole pass after Dispose
            }
        });
        Assert.True(overlapped > 0, "the writer never ran across a Dispose: the test proved nothing");
    }

    [Fact]
    public void A_writer_on_a_large_array_racing_Dispose_does_not_fault_the_process()
    {
        // 1 MB: above the system allocator's mapping threshold, so an immediate free unmaps the pages under the writer.
        int overlapped = Race(isChecked: false, 1 << 16, 30, array =>
        {
            while (true)
            {
                foreach (var record in array) record.Bar = Marker;
            }
        });
        // Reaching here means no fault; but only tries where the writer was still writing when Dispose ran prove it.
        Assert.True(overlapped > 0, "the writer never ran across a Dispose: the test proved nothing");
    }

    [Fact]
    public void A_MoveTo_writer_racing_Dispose_never_writes_into_the_next_array()
    {
        int overlapped = Race(isChecked: false, 64, 300, array =>
        {
            for (int i = 0; ; i++) array.MoveTo(i & 63).Bar = Marker;
        });
        Assert.True(overlapped > 0, "the writer never ran across a Dispose: the test proved nothing");
    }

    [Fact]
    public void A_disposed_arrays_block_is_released_once_its_views_are_unreachable()
    {
        using var allocator = new TypeAllocator();
        var chunk = DisposeAndForget(allocator);
        // IsAlive, not TryGetTarget: unoptimized code would keep the target in a hidden local.
        for (int i = 0; i < 3 && chunk.IsAlive; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.False(chunk.IsAlive, "the disposed array's block is still referenced");
        Assert.Equal(0, allocator.GetSlabStatistics().ReservedBytes);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference DisposeAndForget(TypeAllocator allocator)
    {
        var array = allocator.NewArray<IFooData>(1000);
        foreach (var record in array) record.Bar = 1; // items, dropped: like views, they hold the block only while reachable
        var chunk = new WeakReference(((Manaloc.Memory.CompilerServices.NativeRecordView)(object)array.View).Chunk!);
        array.Dispose();
        return chunk;
    }
}
