using Manaloc.Memory;
using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Lab.RequestServer.Servers.Manaloc;

namespace RequestServer.Tests.Servers.Manaloc;

/// <summary>The Manaloc build's record op: one native array per thread, reused across requests.</summary>
public sealed class NativeRecordBatchTests
{
    [Fact]
    public void Every_count_gets_the_right_checksum_while_the_array_grows_and_is_reused()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "test.records", Checked = true });
        using var batch = new NativeRecordBatch(allocator);
        // Growing past the first array (1024), to the largest count, then smaller counts on the large array.
        foreach (int count in new[] { 1, 64, 1024, 1025, 3000, RequestHandler.MaxRecords, 5, 64 })
        {
            Assert.Equal(RequestHandler.ExpectedRecordChecksum(count), batch.FillAndSum(count));
        }
    }

    [Fact]
    public void A_warm_thread_allocates_nothing_managed_per_request()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "test.records", Checked = false });
        using var batch = new NativeRecordBatch(allocator);
        batch.FillAndSum(64); // this thread's array
        long before = GC.GetAllocatedBytesForCurrentThread();
        long sum = 0;
        for (int i = 0; i < 1000; i++) sum += batch.FillAndSum(64);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(1000 * RequestHandler.ExpectedRecordChecksum(64), sum);
        Assert.Equal(0, allocated);
    }

    [Fact]
    public void Threads_running_the_op_at_once_each_use_their_own_records()
    {
        // Shared records would mix one thread's (i, i², i/2) into another's sums: counts differ per thread so
        // a shared array would also be regrown under a reader.
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "test.records", Checked = true });
        using var batch = new NativeRecordBatch(allocator);
        int[] counts = [100, 1500, 4000, 7];
        int wrong = 0;
        var threads = counts.Select(count => new Thread(() =>
        {
            long expected = RequestHandler.ExpectedRecordChecksum(count);
            for (int i = 0; i < 2000; i++)
            {
                if (batch.FillAndSum(count) != expected) Interlocked.Increment(ref wrong);
            }
        })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) Assert.True(t.Join(TimeSpan.FromSeconds(60)));
        Assert.Equal(0, wrong);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(RequestHandler.MaxRecords + 1)]
    public void A_count_out_of_range_is_refused_by_name(int count)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "test.records" });
        using var batch = new NativeRecordBatch(allocator);
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => batch.FillAndSum(count));
        Assert.Equal("count", e.ParamName);
    }
}
