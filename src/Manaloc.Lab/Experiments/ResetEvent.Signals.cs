using System.Collections.Concurrent;
using System.Diagnostics;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>The event types behind one face, for the two-thread scenarios.</summary>
public sealed partial class ResetEvent
{
    /// <summary>One event type behind a common face, for the two-thread scenarios.</summary>
    private abstract class Signal : IDisposable
    {
        public static Signal Create(string variant) => variant switch
        {
            Are => new AreSignal(),
            Mres => new MresSignal(),
            Semaphore => new SemaphoreSignal(),
            Economic => new EconomicSignal(),
            _ => throw new ArgumentOutOfRangeException(nameof(variant), variant, "Unknown event variant."),
        };

        /// <summary>True when every Set is counted (a semaphore), so the consumer waits once per item.</summary>
        public virtual bool CountsSets => false;
        public abstract void Set();
        public abstract void Wait();

        /// <summary>Waits for the producer after finding <paramref name="queue"/> empty, without losing a Set.</summary>
        public virtual void WaitForMore(ConcurrentQueue<long> queue) => Wait();
        public abstract void Dispose();
    }

    private sealed class AreSignal : Signal
    {
        private readonly AutoResetEvent _e = new(false);
        public override void Set() => _e.Set();
        public override void Wait() => _e.WaitOne();
        public override void Dispose() => _e.Dispose();
    }

    private sealed class MresSignal : Signal
    {
        private readonly ManualResetEventSlim _e = new(false);
        public override void Set() => _e.Set();
        public override void Wait() { _e.Wait(); _e.Reset(); }

        public override void WaitForMore(ConcurrentQueue<long> queue)
        {
            // Reset before the re-check: a Set after the Reset is not lost; one before it is seen by the re-check.
            _e.Reset();
            if (queue.IsEmpty) _e.Wait();
        }

        public override void Dispose() => _e.Dispose();
    }

    private sealed class SemaphoreSignal : Signal
    {
        private readonly SemaphoreSlim _e = new(0);
        public override bool CountsSets => true;
        public override void Set() => _e.Release();
        public override void Wait() => _e.Wait();
        public override void Dispose() => _e.Dispose();
    }

    private sealed class EconomicSignal : Signal
    {
        private readonly EconomicResetEvent _e = new();
        public override void Set() => _e.Set();
        public override void Wait() => _e.Wait();
        public override void Dispose() => _e.Dispose();
    }
}
