using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;
using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class EventMetricsTests
{
    [Fact]
    public void Blocked_waits_and_lock_sleeps_are_observable_on_the_threading_meter()
    {
        using (var e = new EconomicResetEvent(spinCount: 0)) Assert.False(e.Wait(1)); // blocks once: the counter's type is initialized
        var rw = new SlimReaderWriterLock(spinCount: 0);
        rw.EnterWriteLock();
        var t = new Thread(() => { rw.EnterReadLock(); rw.ExitReadLock(); });
        t.Start();
        EventTestSupport.WaitUntil(() => SlimReaderWriterLock.Sleeps > 0, "a reader sleeping");
        rw.ExitWriteLock();
        t.Join();

        var seen = new Dictionary<string, long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocMeters.ThreadingName) l.EnableMeasurementEvents(instrument);
        };
        var kinds = new Dictionary<string, object?>();
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            seen[instrument.Name] = value;
            foreach (var tag in tags) if (tag.Key == "kind") kinds[instrument.Name] = tag.Value;
        });
        listener.Start();
        listener.RecordObservableInstruments();

        Assert.True(seen.GetValueOrDefault("manaloc.reset_event.blocked_waits") >= 1);
        Assert.True(seen.GetValueOrDefault("manaloc.rwlock.sleeps") >= 1);
        Assert.Equal("reset-event", kinds.GetValueOrDefault("manaloc.reset_event.blocked_waits"));
        Assert.Equal("rwlock", kinds.GetValueOrDefault("manaloc.rwlock.sleeps"));
    }
}
