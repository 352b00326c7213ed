namespace Manaloc.Concurrency.Tests.Properties;

/// <summary>A time provider with any timestamp frequency, moved only by <see cref="Advance"/>.</summary>
public sealed class SteppedClock(long frequency, long start) : TimeProvider
{
    private long _now = start;

    public override long TimestampFrequency => frequency;

    public override long GetTimestamp() => Volatile.Read(ref _now);

    public void Advance(long timestampTicks) => Interlocked.Add(ref _now, timestampTicks);

    public override string ToString() => $"{frequency} Hz at {_now}";
}
