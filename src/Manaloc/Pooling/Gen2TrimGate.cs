namespace Manaloc.Pooling;

/// <summary>
/// Decides which gen-2 collections start a trimming pass of a pool: every one under memory pressure, otherwise only one
/// that comes at least <see cref="Interval"/> after the last pass, on the pool's <see cref="TimeProvider"/>.
/// </summary>
/// <remarks>
/// <para>Why: a pass trims what was not rented since the previous pass. A process that churns large arrays (a
/// MemoryStream growing on the large-object heap) collects gen 2 many times a second, so without a floor "idle" meant
/// "unused for a few milliseconds": the buffer manager dropped a stream's hot 1 MiB arrays between two uses and created
/// them again, cold, at the next (docs/pooling.md gives the lab's figures). With the floor, a buffer is trimmed only when idle for at least the interval.</para>
/// <para>The clock is read here, in the gen-2 callback on the finalizer thread, never on a rent or return path. A zero
/// interval lets every collection pass (the plain pools' behaviour).</para>
/// <para>Thread safety: none; one pool's gen-2 callback runs one at a time (the GC's finalizer thread).</para>
/// </remarks>
internal struct Gen2TrimGate(TimeProvider clock, TimeSpan interval)
{
    /// <summary>The floor a buffer manager and its memory pools use: one second.</summary>
    public static readonly TimeSpan BufferInterval = TimeSpan.FromSeconds(1);

    private long _lastPass;
    private bool _passed;

    /// <summary>The least time between two passes that are not under memory pressure.</summary>
    public readonly TimeSpan Interval => interval;

    /// <summary>True when this collection starts a pass (always under <paramref name="pressure"/>); a pass notes its time.</summary>
    public bool Pass(bool pressure)
    {
        if (interval <= TimeSpan.Zero) return true;
        long now = clock.GetTimestamp();
        if (!pressure && _passed && clock.GetElapsedTime(_lastPass, now) < interval) return false;
        _lastPass = now;
        _passed = true;
        return true;
    }
}
