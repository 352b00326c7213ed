using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>Once a writer waits, new readers wait behind it, biased or not; a dead reader is reported, not waited for.</summary>
public sealed class SlimReaderWriterLockFairnessTests
{
    [Fact]
    public void A_new_biased_reader_waits_behind_a_waiting_writer()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        var other = new SlimReaderWriterLock();
        var errors = new List<Exception>();
        using var holding = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        // A reader through the state word while the bias is on: a thread that already holds another read lock.
        var holder = EventTestSupport.Start(() =>
        {
            other.EnterReadLock();
            rw.EnterReadLock();
            holding.Set();
            release.Wait();
            rw.ExitReadLock();
            other.ExitReadLock();
        }, errors, "state-word reader");
        Assert.True(holding.Wait(EventTestSupport.Stall));
        Assert.True(rw.IsReadBiased);
        int order = 0, writerAt = 0, readerAt = 0;
        var writer = EventTestSupport.Start(() =>
        {
            rw.EnterWriteLock();
            writerAt = Interlocked.Increment(ref order);
            rw.ExitWriteLock();
        }, errors, "writer");
        EventTestSupport.WaitUntil(() => rw.WaitingWriters == 1, "the writer registering as waiting");

        bool? tried = null;
        var late = EventTestSupport.Start(() =>
        {
            var warm = new SlimReaderWriterLock(); // so that this thread's next read lock may go through its slot
            warm.EnterReadLock();
            warm.ExitReadLock();
            tried = rw.TryEnterReadLock();
            if (tried == true) rw.ExitReadLock();
            rw.EnterReadLock();
            readerAt = Interlocked.Increment(ref order);
            rw.ExitReadLock();
        }, errors, "late reader");
        EventTestSupport.WaitUntil(() => tried.HasValue, "the late reader's attempt");
        Assert.False(tried, "a biased reader entered while a writer was waiting");

        release.Set();
        Assert.True(holder.Join(EventTestSupport.Stall) && writer.Join(EventTestSupport.Stall) && late.Join(EventTestSupport.Stall));
        Assert.Empty(errors);
        Assert.True(writerAt < readerAt, $"the late reader ({readerAt}) went before the waiting writer ({writerAt})");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_writer_waiting_for_a_reader_whose_thread_exited_gets_an_exception_not_a_hang(bool biased)
    {
        var rw = new SlimReaderWriterLock();
        if (!biased) rw.TurnBiasOffForTests();
        var errors = new List<Exception>();
        var dying = EventTestSupport.Start(() =>
        {
            var warm = new SlimReaderWriterLock();
            warm.EnterReadLock();
            warm.ExitReadLock();
            rw.EnterReadLock(); // and never released
            Assert.Equal(biased, rw.IsBiasedReadHeld);
        }, errors, "dying reader");
        Assert.True(dying.Join(EventTestSupport.Stall));
        Assert.Empty(errors);

        var writer = EventTestSupport.Start(() => rw.EnterWriteLock(), errors, "writer");
        Assert.True(writer.Join(EventTestSupport.Stall), "the writer hung on a reader whose thread had exited");
        var e = Assert.IsType<InvalidOperationException>(Assert.Single(errors));
        Assert.Contains("exited while holding a read lock", e.Message);
        Assert.Equal(0, rw.WaitingWriters); // it stopped holding readers back
        Assert.Equal(biased, rw.IsReadBiased); // and gave the bias back
        Assert.Throws<InvalidOperationException>(() => rw.TryEnterWriteLock(TimeSpan.FromSeconds(30)));
        Assert.True(rw.TryEnterReadLock(), "readers can still read");
        rw.ExitReadLock();
    }
}
