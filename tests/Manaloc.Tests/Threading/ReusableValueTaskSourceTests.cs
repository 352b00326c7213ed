// The source is completed before its result is read: nothing blocks, so the blocking-call rule does not apply.
#pragma warning disable xUnit1031
using System.Threading.Tasks.Sources;
using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class ReusableValueTaskSourceTests
{
    [Fact]
    public async Task Awaits_results_across_many_reuses()
    {
        var source = new ReusableValueTaskSource<int>();
        for (int i = 0; i < 200; i++)
        {
            if (i > 0) source.Reset();
            var task = source.Task;
            Assert.False(source.IsCompleted);
            _ = System.Threading.Tasks.Task.Run(() => source.SetResult(i * 3));
            Assert.Equal(i * 3, await task);
        }
    }

    [Fact]
    public void A_stale_token_and_a_second_completion_throw()
    {
        var source = new ReusableValueTaskSource<int>();
        short first = source.Version;
        source.SetResult(1);
        Assert.Equal(1, source.GetResult(first));
        Assert.Throws<InvalidOperationException>(() => source.SetResult(2));

        source.Reset();
        Assert.NotEqual(first, source.Version);
        Assert.Throws<InvalidOperationException>(() => source.GetResult(first));
        Assert.Equal(ValueTaskSourceStatus.Pending, source.GetStatus(source.Version));
    }

    [Fact]
    public async Task Errors_propagate_and_the_untyped_task_works()
    {
        var source = new ReusableValueTaskSource<int>();
        var task = source.TaskWithoutResult;
        source.SetException(new TimeoutException("late"));
        var e = await Assert.ThrowsAsync<TimeoutException>(async () => await task);
        Assert.Equal("late", e.Message);
        Assert.Throws<ArgumentNullException>(() => new ReusableValueTaskSource<int>().SetException(null!));
    }

    [Fact]
    public void Reuse_allocates_nothing_on_the_completed_and_the_continuation_paths()
    {
        var source = new ReusableValueTaskSource<long>();
        long sum = 0;
        Action continuation = () => sum += source.GetResult(source.Version);
        void Cycle(long i)
        {
            source.Reset();
            var task = source.Task;
            task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(continuation);
            source.SetResult(i); // runs the continuation inline
            source.Reset();
            var completed = source.Task;
            source.SetResult(i);
            sum += completed.Result;
        }
        for (int i = 0; i < 1000; i++) Cycle(i);
        sum = 0;

        int runs = 0;
        long allocated = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < 10_000; i++) Cycle(i);
            runs++;
        });

        Assert.Equal(0, allocated);
        Assert.Equal(runs * 2 * (10_000L * 9_999 / 2), sum);
    }
}
