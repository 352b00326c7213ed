namespace Manaloc.Lab.Soak;

/// <summary>
/// Stops every soak thread that allocates or hands items over (the load threads, the dispatcher cycler)
/// at a point where it holds nothing in its hands (the top of its loop), so the sampler measures a
/// heap nobody is changing: no thread allocates during the collections, and
/// what the soak holds in flight (in its hand-off slots, in the pools) can be counted at the very
/// moment the heap is measured.
/// </summary>
/// <remarks>
/// <para>Between two checks a participant must never wait for a participant: the pause would wait for
/// it while what it waits for is parked (why the event ping-pong threads are not participants).</para>
/// <para>Built on <see cref="Monitor"/>, not on the library under test, so the measurement does not
/// depend on what it measures. Participants poll <see cref="_requested"/> with a volatile read at
/// each loop top (a stale false costs one more operation before parking); every other field is read
/// and written under the lock.</para>
/// <para>Memory ordering: a participant parks by incrementing <c>_parked</c> under the lock; the
/// pauser sees the last increment under the same lock, so every write a participant made before
/// parking (its counters, the hand-off slots, the pools' stacks) happens before the sampler's reads
/// (Monitor release/acquire). Resuming is the same in the other direction.</para>
/// </remarks>
internal sealed class QuietPoint
{
    private readonly object _gate = new();
    private int _running, _parked;
    private volatile bool _requested;

    /// <summary>True while a pause is requested (a snapshot, for diagnostics).</summary>
    public bool PauseRequested => _requested;

    /// <summary>Participants parked now, of those counted in (a snapshot, for diagnostics).</summary>
    public (int Parked, int Running) Snapshot()
    {
        lock (_gate) return (_parked, _running);
    }

    /// <summary>Counts a participant in; call before its thread starts.</summary>
    public void Join()
    {
        lock (_gate) _running++;
    }

    /// <summary>Counts a participant out (its thread is ending): a pause no longer waits for it.</summary>
    public void Leave()
    {
        lock (_gate)
        {
            _running--;
            Monitor.PulseAll(_gate);
        }
    }

    /// <summary>Called by a participant where it holds nothing: parks while a pause is on.</summary>
    public void Check()
    {
        if (!_requested) return;
        lock (_gate)
        {
            _parked++;
            Monitor.PulseAll(_gate); // the pauser may be waiting for this one
            while (_requested) Monitor.Wait(_gate);
            _parked--;
        }
    }

    /// <summary>Sleeps up to <paramref name="duration"/>, less if a pause is requested meanwhile (so a participant that sleeps does not hold the pause up).</summary>
    public void Nap(TimeSpan duration)
    {
        lock (_gate)
        {
            if (!_requested) Monitor.Wait(_gate, duration);
        }
    }

    /// <summary>Asks every participant to park and waits until all have; false if that took longer than <paramref name="timeout"/>. Call <see cref="Resume"/> either way.</summary>
    public bool Pause(TimeSpan timeout)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        lock (_gate)
        {
            _requested = true;
            Monitor.PulseAll(_gate); // wakes nappers
            while (_parked < _running)
            {
                long left = deadline - Environment.TickCount64;
                if (left <= 0) return false;
                Monitor.Wait(_gate, (int)Math.Min(left, int.MaxValue));
            }
            return true;
        }
    }

    /// <summary>Lets the parked participants go on.</summary>
    public void Resume()
    {
        lock (_gate)
        {
            _requested = false;
            Monitor.PulseAll(_gate);
        }
    }
}
