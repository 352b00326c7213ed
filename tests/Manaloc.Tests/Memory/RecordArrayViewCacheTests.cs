using System.Runtime.CompilerServices;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>
/// Each thread remembers the record array whose moving view it used last (the array's key and a weak handle to the view):
/// a move on another array, a new array made after one was disposed, many threads over many arrays and a thread given an
/// exited thread's index must each find their own view, and the remembered array must not be kept alive.
/// </summary>
[Collection(nameof(ThreadIndexCollection))]
public sealed class RecordArrayViewCacheTests
{
    private const int Records = 256;

    /// <summary>An array whose record i holds <paramref name="offset"/> + i, so arrays are told apart by what they read.</summary>
    private static RecordArray<IFooData> Numbered(TypeAllocator allocator, int offset, int records = Records)
        => NumberedRecordArrays.Create(allocator, records, offset);

    private static void OnNewThread(Action action)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try { action(); }
            catch (Exception e) { failure = e; }
        });
        thread.Start();
        thread.Join();
        if (failure is not null) throw new Xunit.Sdk.XunitException($"the thread failed: {failure}");
    }

    [Theory]
    [InlineData(true, true)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(false, false)]
    public void A_thread_moving_A_then_B_then_A_finds_each_arrays_own_view(bool isChecked, bool onCreatingThread)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var a = Numbered(allocator, 0);
        using var b = Numbered(allocator, 100_000);
        void Moves()
        {
            for (int round = 0; round < 3; round++)
            {
                Assert.Equal(5 + round, a.MoveTo(5 + round).Bar);
                Assert.Equal(100_007 + round, b.MoveTo(7 + round).Bar);
                Assert.Equal(5 + round, a.View.Bar); // a's view stayed where this thread moved it: b's move did not take it
                Assert.Equal(9 + round, a.MoveTo(9 + round).Bar);
                Assert.Equal(100_007 + round, b.View.Bar); // and a's move did not take b's
                Assert.NotSame(a.View, b.View);
                long sum = 0;
                foreach (var r in a.Scan()) sum += r.Bar;
                Assert.Equal((long)Records * (Records - 1) / 2, sum);
                Assert.Equal(100_007 + round, b.View.Bar); // b's view untouched by a's scan
            }
        }
        if (onCreatingThread) Moves();
        else OnNewThread(Moves);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_new_array_made_after_the_last_one_was_disposed_never_gets_the_disposed_arrays_view(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        OnNewThread(() =>
        {
            for (int round = 0; round < 50; round++)
            {
                // The same length each round, so a new array may well be given the disposed one's block or handle slot.
                var old = Numbered(allocator, round * 1000);
                var oldView = old.MoveTo(3); // this thread now remembers old
                old.Dispose();
                if (round % 10 == 9) ThreadIndexTests.CollectExitedThreads(); // let dropped arrays' memory and handles go
                using var next = Numbered(allocator, (round + 1) * 1000); // its own moves, on this thread, right after
                var nextView = next.MoveTo(4);
                Assert.NotSame(oldView, nextView);
                Assert.Equal((round + 1) * 1000 + 4, nextView.Bar);
                long sum = 0;
                foreach (var r in next.Scan()) sum += r.Bar; // the scan checks the view's own array: a disposed one's throws
                Assert.Equal((long)Records * (round + 1) * 1000 + (long)Records * (Records - 1) / 2, sum);
                if (isChecked) Assert.Throws<ObjectDisposedException>(() => oldView.Bar); // still the disposed array's
                Assert.Throws<ObjectDisposedException>(() => old.MoveTo(3));
            }
        });
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Many_threads_over_many_arrays_each_read_their_own_view_of_each_array(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        const int Threads = 4, Arrays = 12, Moves = 30_000;
        var arrays = new RecordArray<IFooData>[Arrays];
        for (int k = 0; k < Arrays; k++) arrays[k] = Numbered(allocator, k * 100_000);
        var views = new object[Threads, Arrays];
        long wrong = 0;
        Exception? failure = null;
        using var start = new Barrier(Threads);
        var workers = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int id = t;
            workers[t] = new Thread(() =>
            {
                try
                {
                    var random = new Random(id);
                    var where = new int[Arrays]; // where this thread last moved each array's view (0 before its first move)
                    start.SignalAndWait();
                    for (int i = 0; i < Moves; i++)
                    {
                        int k = random.Next(Arrays), index = random.Next(Records);
                        var view = arrays[k].MoveTo(index);
                        if (view.Bar != k * 100_000 + index) Interlocked.Increment(ref wrong);
                        where[k] = index;
                        views[id, k] ??= view;
                        if (!ReferenceEquals(views[id, k], view)) Interlocked.Increment(ref wrong); // one view per thread and array
                        int other = random.Next(Arrays); // another array's view is still where this thread left it
                        if (arrays[other].View.Bar != other * 100_000 + where[other]) Interlocked.Increment(ref wrong);
                    }
                }
                catch (Exception e)
                {
                    Interlocked.CompareExchange(ref failure, e, null);
                }
            });
            workers[t].Start();
        }
        foreach (var worker in workers) worker.Join();
        try
        {
            if (failure is not null) throw new Xunit.Sdk.XunitException($"a thread failed: {failure}");
            Assert.Equal(0, wrong);
            var distinct = new HashSet<object>(ReferenceEqualityComparer.Instance);
            foreach (var view in views) Assert.True(view is null || distinct.Add(view), "two threads or two arrays shared a view");
        }
        finally
        {
            foreach (var array in arrays) array.Dispose();
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_thread_given_an_exited_threads_index_finds_its_own_views_after_moving_another_array(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var a = Numbered(allocator, 0);
        using var b = Numbered(allocator, 100_000);
        int exitedIndex = 0;
        OnNewThread(() =>
        {
            exitedIndex = ThreadIndex.Acquire();
            Assert.Equal(57, a.MoveTo(57).Bar);
            Assert.Equal(100_031, b.MoveTo(31).Bar);
        });
        bool reused = ThreadIndexTests.UntilAThreadIsGiven(exitedIndex, () =>
        {
            Assert.Equal(100_000, b.View.Bar); // b first: this thread now remembers b
            Assert.Equal(0, a.View.Bar); // then a: its own view, not b's, and not where the exited thread left a's
            Assert.Equal(12, a.MoveTo(12).Bar);
            Assert.Equal(100_000, b.View.Bar);
        });
        Assert.True(reused, "no later thread was given the exited thread's index: the test proved nothing");
    }

    [Fact]
    public void The_array_a_thread_used_last_is_not_kept_alive_by_the_thread()
    {
        using var allocator = new TypeAllocator();
        var (array, view) = UseAndDispose(allocator);
        ThreadIndexTests.CollectExitedThreads();
        // This thread's cache still names the array: it holds the array's key and a weak handle, neither of which keeps it.
        Assert.False(array.IsAlive, "the disposed array is still reachable after a collection");
        Assert.False(view.IsAlive, "the thread's view of the disposed array (and so its memory) is still reachable");
        using var next = Numbered(allocator, 7);
        Assert.Equal(10, next.MoveTo(3).Bar);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static (WeakReference Array, WeakReference View) UseAndDispose(TypeAllocator allocator)
    {
        var array = Numbered(allocator, 0);
        var view = array.MoveTo(9);
        Assert.Equal(9, view.Bar);
        array.Dispose();
        return (new WeakReference(array), new WeakReference(view));
    }
}
