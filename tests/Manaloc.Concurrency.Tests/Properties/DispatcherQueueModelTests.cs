using CsCheck;
using Manaloc.Threading;

namespace Manaloc.Concurrency.Tests.Properties;

/// <summary>
/// The dispatcher's full-queue policies against a model queue. The one worker is held inside a
/// first item, so the queue alone decides each post; then the worker is released and the
/// dispatcher drained: items must run in the model's order, and the dropped ones must be exactly
/// the model's.
/// </summary>
public sealed class DispatcherQueueModelTests
{
    [Theory]
    [InlineData(FullQueueMode.FailFast)]
    [InlineData(FullQueueMode.DropOldest)]
    [InlineData(FullQueueMode.Block)]
    public void Posts_follow_the_queue_policy(FullQueueMode mode)
        => Gen.Select(Gen.Int[1, 8], Gen.Int[0, 24]).Sample((capacity, posts) =>
        {
            var ran = new List<int>();
            var dropped = new List<int>();
            var gate = new ManualResetEventSlim();
            var started = new ManualResetEventSlim();
            using var dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions
            {
                ThreadCount = 1, Capacity = capacity, FullMode = mode,
                OnItemDropped = item => dropped.Add(((Numbered)item.Target!).Number),
            });
            dispatcher.Post(() => { started.Set(); gate.Wait(); });
            Assert.True(started.Wait(TimeSpan.FromSeconds(30)), "the worker never started the gate item");

            int size = dispatcher.Capacity;
            var model = new Queue<int>();
            var modelDropped = new List<int>();
            for (int i = 0; i < posts; i++)
            {
                var item = new Numbered(i, ran);
                bool accepted = dispatcher.TryPost(item.Run);
                bool expected = model.Count < size || mode == FullQueueMode.DropOldest;
                if (model.Count == size && mode == FullQueueMode.DropOldest) modelDropped.Add(model.Dequeue());
                if (expected) model.Enqueue(i);
                Assert.True(accepted == expected, $"post {i} of {posts} (capacity {size}, {mode}): accepted {accepted}, model says {expected}");
            }
            gate.Set();
            var handedBack = dispatcher.Shutdown(Timeout.InfiniteTimeSpan);
            Assert.Empty(handedBack);
            Assert.Equal(model, ran);
            Assert.Equal(modelDropped, dropped);
        }, iter: PoolModelTests.Iterations / 3);

    private sealed class Numbered(int number, List<int> ran)
    {
        public int Number => number;
        public void Run() { lock (ran) ran.Add(number); }
    }
}
