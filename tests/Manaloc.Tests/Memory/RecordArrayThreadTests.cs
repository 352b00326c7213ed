using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>
/// The array's own moving view (<c>Scan()</c>, <c>MoveTo</c>, <c>View</c>) used by several threads at once, as concurrent
/// requests of a server do: each thread must read the records it asked for, never another thread's.
/// </summary>
public sealed class RecordArrayThreadTests
{
    private const int Records = 4096;

    private static RecordArray<IFooData> Numbered(TypeAllocator allocator, int records = Records)
    {
        var array = allocator.NewArray<IFooData>(records);
        for (int i = 0; i < records; i++) array.MoveTo(i).Bar = i;
        return array;
    }

    /// <summary>Runs <paramref name="body"/> on <paramref name="threads"/> plain threads released together; returns what they
    /// report as wrong, summed.</summary>
    private static long OnThreads(int threads, Func<int, long> body)
    {
        using var start = new Barrier(threads);
        long wrong = 0;
        var workers = new Thread[threads];
        Exception? failure = null;
        for (int t = 0; t < threads; t++)
        {
            int id = t;
            workers[t] = new Thread(() =>
            {
                try
                {
                    start.SignalAndWait();
                    Interlocked.Add(ref wrong, body(id));
                }
                catch (Exception e)
                {
                    Interlocked.CompareExchange(ref failure, e, null);
                }
            });
            workers[t].Start();
        }
        foreach (var worker in workers) worker.Join();
        if (failure is not null) throw new Xunit.Sdk.XunitException($"a thread failed: {failure}");
        return wrong;
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Two_threads_scanning_one_array_each_see_every_record_in_order(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        const int records = 100_000;
        const long expectedSum = (long)records * (records - 1) / 2;
        using var array = Numbered(allocator, records);
        long wrongPasses = OnThreads(2, _ =>
        {
            long wrong = 0;
            for (int pass = 0; pass < 40; pass++)
            {
                long sum = 0;
                int expected = 0, outOfOrder = 0;
                foreach (var r in array.Scan())
                {
                    int bar = r.Bar;
                    if (bar != expected) outOfOrder++;
                    sum += bar;
                    expected++;
                }
                if (sum != expectedSum || outOfOrder != 0 || expected != records) wrong++;
            }
            return wrong;
        });
        Assert.True(wrongPasses == 0, $"{wrongPasses} of 80 passes summed the wrong records");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Threads_moving_the_arrays_view_each_read_the_record_they_moved_to(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var array = Numbered(allocator);
        long wrongReads = OnThreads(4, id =>
        {
            long wrong = 0;
            var random = new Random(id);
            for (int i = 0; i < 200_000; i++)
            {
                int index = random.Next(Records);
                var view = array.MoveTo(index);
                if (view.Bar != index) wrong++;
                if (array.View.Jar != 0 || array.View.Bar != index) wrong++; // View is the calling thread's view, where it moved it
            }
            return wrong;
        });
        Assert.True(wrongReads == 0, $"{wrongReads} reads through the array's view showed another thread's record");
    }

    [Fact]
    public void A_threads_view_stays_where_that_thread_moved_it_while_others_move_theirs()
    {
        using var allocator = new TypeAllocator();
        using var array = Numbered(allocator);
        using var moved = new ManualResetEventSlim();
        using var othersDone = new ManualResetEventSlim();
        IFooData? seen = null;
        int before = -1, after = -1;
        var reader = new Thread(() =>
        {
            seen = array.MoveTo(17);
            before = seen.Bar;
            moved.Set();
            othersDone.Wait();
            after = seen.Bar;
        });
        reader.Start();
        moved.Wait();
        for (int i = 0; i < Records; i++) array.MoveTo(i);
        foreach (var r in array.Scan()) _ = r.Bar;
        othersDone.Set();
        reader.Join();
        Assert.Equal(17, before);
        Assert.Equal(17, after);
        Assert.NotSame(array.View, seen); // the reader's view is its own
        Assert.Same(array.View, array.MoveTo(3)); // and on one thread, the array's view is one object, as documented
    }

    [Fact]
    public void Another_threads_view_of_a_checked_array_throws_after_Dispose()
    {
        using var allocator = new TypeAllocator();
        var array = Numbered(allocator);
        IFooData? view = null;
        var thread = new Thread(() => view = array.MoveTo(5));
        thread.Start();
        thread.Join();
        Assert.Equal(5, view!.Bar);
        array.Dispose();
        Assert.Throws<ObjectDisposedException>(() => view.Bar);
    }
}
