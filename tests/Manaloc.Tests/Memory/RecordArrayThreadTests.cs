using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>
/// The array's own moving view (<c>Scan()</c>, <c>MoveTo</c>, <c>View</c>) used by several threads at once, as concurrent
/// requests of a server do: each thread must read the records it asked for, never another thread's.
/// </summary>
[Collection(nameof(ThreadIndexCollection))]
public sealed class RecordArrayThreadTests
{
    private const int Records = 4096;

    private static RecordArray<IFooData> Numbered(TypeAllocator allocator, int records = Records)
        => NumberedRecordArrays.Create(allocator, records);

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

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_thread_given_an_exited_threads_index_starts_at_record_0_not_where_the_exited_thread_left_its_view(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var array = Numbered(allocator);
        int exitedIndex = 0;
        var exited = new Thread(() =>
        {
            exitedIndex = ThreadIndex.Acquire();
            Assert.Equal(57, array.MoveTo(57).Bar);
        });
        exited.Start();
        exited.Join();
        // The next thread given that index finds the exited thread's entry: it must not read record 57 through it.
        bool reused = ThreadIndexTests.UntilAThreadIsGiven(exitedIndex, () => Assert.Equal(0, array.View.Bar));
        Assert.True(reused, "no later thread was given the exited thread's index: the test proved nothing");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Threads_that_come_and_go_read_their_own_records_and_the_views_table_stays_small(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var array = Numbered(allocator);
        long wrong = 0;
        for (int wave = 0; wave < 10; wave++)
        {
            int inUse = ThreadIndex.InUse;
            wrong += OnThreads(4, id =>
            {
                long bad = 0;
                var random = new Random(id);
                for (int i = 0; i < 20_000; i++)
                {
                    int index = random.Next(Records);
                    if (array.MoveTo(index).Bar != index) bad++;
                }
                long sum = 0;
                foreach (var r in array.Scan()) sum += r.Bar;
                if (sum != (long)Records * (Records - 1) / 2) bad++;
                return bad;
            });
            // Their indexes come back before the next wave, so a wave's threads take the same low indexes again.
            Assert.True(ThreadIndexTests.CollectUntilInUseAtMost(inUse), $"the wave's exited threads still hold indexes: {ThreadIndex.InUse} in use, {inUse} before it");
        }
        Assert.True(wrong == 0, $"{wrong} reads showed another thread's record");
        // 40 threads used the array, at most 4 alive at once (plus other tests' threads): without reuse it would hold 64.
        Assert.True(array.ThreadViewSlots <= 32, $"the views table has {array.ThreadViewSlots} entries after 40 threads, 4 at a time");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void One_thread_moving_many_arrays_disposed_and_made_again_reads_each_arrays_records(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        const int Live = 24, Rounds = 300, Length = 64;
        var arrays = new RecordArray<IFooData>[Live];
        var stamps = new int[Live];
        long wrong = 0, missedDisposal = 0;
        // The arrays are made and disposed here, and read on one other thread: each array's view on that thread is made
        // from the other thread's table entry, and a new array (perhaps at a disposed one's address) must never show it.
        using var work = new System.Collections.Concurrent.BlockingCollection<Action>();
        var reader = new Thread(() =>
        {
            foreach (var item in work.GetConsumingEnumerable()) item();
        });
        reader.Start();
        void OnReader(Action action)
        {
            using var done = new ManualResetEventSlim();
            Exception? failure = null;
            work.Add(() =>
            {
                try { action(); }
                catch (Exception e) { failure = e; }
                finally { done.Set(); }
            });
            done.Wait();
            if (failure is not null) throw new Xunit.Sdk.XunitException($"the reader failed: {failure}");
        }
        try
        {
            for (int round = 0; round < Rounds; round++)
            {
                int slot = round % Live;
                var old = arrays[slot];
                if (old is not null)
                {
                    IFooData? keptView = null;
                    OnReader(() => keptView = old.MoveTo(1));
                    old.Dispose();
                    OnReader(() =>
                    {
                        try
                        {
                            old.MoveTo(2);
                            missedDisposal++;
                        }
                        catch (ObjectDisposedException)
                        {
                        }
                        if (isChecked)
                        {
                            try
                            {
                                _ = keptView!.Bar;
                                missedDisposal++;
                            }
                            catch (ObjectDisposedException)
                            {
                            }
                        }
                    });
                }
                var array = allocator.NewArray<IFooData>(Length);
                for (int i = 0; i < Length; i++) array.MoveTo(i).Bar = round * 1000 + i;
                arrays[slot] = array;
                stamps[slot] = round;
                OnReader(() =>
                {
                    // Every live array, in an order that changes each round: each read must be that array's own record.
                    for (int k = 0; k < Live; k++)
                    {
                        int s = (k * 7 + round) % Live;
                        var a = arrays[s];
                        if (a is null) continue;
                        int index = (round + k) % Length;
                        if (a.MoveTo(index).Bar != stamps[s] * 1000 + index) wrong++;
                        if (a.View.Bar != stamps[s] * 1000 + index) wrong++;
                    }
                });
            }
        }
        finally
        {
            work.CompleteAdding();
            reader.Join();
            foreach (var a in arrays) a?.Dispose();
        }
        Assert.Equal(0, wrong);
        Assert.Equal(0, missedDisposal);
    }
}
