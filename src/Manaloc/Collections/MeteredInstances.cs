using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Collections;

/// <summary>
/// The live instances of one kind of collection and their observable instruments on <see cref="ManalocMeters.Memory"/>,
/// created at the first registration and reading every live instance when observed (an unobserved instrument costs
/// nothing). Each measurement is tagged <c>name</c> and <c>kind</c>, and sums the instances that share both.
/// </summary>
/// <remarks>Instances register at construction and unregister at Dispose; the set holds weak references, so a forgotten
/// instance does not stay reachable through it (its finalizer reports the leak). Guarded by <c>_lock</c>.</remarks>
internal sealed class MeteredInstances<T>(Func<T, string> name, Func<T, string> kind, Action<MeteredInstances<T>> createInstruments)
    where T : class
{
    private readonly object _lock = new();
    private readonly List<WeakReference<T>> _live = [];
    private bool _created;

    public void Register(T instance)
    {
        lock (_lock)
        {
            if (!_created)
            {
                _created = true;
                createInstruments(this);
            }
            _live.RemoveAll(w => !w.TryGetTarget(out _));
            _live.Add(new WeakReference<T>(instance));
        }
    }

    public void Unregister(T instance)
    {
        lock (_lock) _live.RemoveAll(w => !w.TryGetTarget(out var live) || ReferenceEquals(live, instance));
    }

    /// <summary>An observable counter (a total that only grows) of <paramref name="read"/> over the live instances.</summary>
    public void Counter(string instrument, Func<T, long> read, string unit, string description)
        => ManalocMeters.Memory.CreateObservableCounter(instrument, () => Measure(read), unit, description);

    /// <summary>An observable up-down counter (a level) of <paramref name="read"/> over the live instances.</summary>
    public void UpDownCounter(string instrument, Func<T, long> read, string unit, string description)
        => ManalocMeters.Memory.CreateObservableUpDownCounter(instrument, () => Measure(read), unit, description);

    /// <summary>One measurement per (name, kind): the sum over the live instances that share them (see <see cref="TaggedMeasurements{T}"/>).</summary>
    private List<Measurement<long>> Measure(Func<T, long> read)
    {
        List<T> live;
        lock (_lock)
        {
            live = new List<T>(_live.Count);
            foreach (var w in _live)
            {
                if (w.TryGetTarget(out var instance)) live.Add(instance);
            }
        }
        var sums = TaggedMeasurements<long>.Summed(static (a, b) => a + b);
        foreach (var instance in live) sums.Add(read(instance), name(instance), kind(instance));
        return sums.ToMeasurements();
    }
}
