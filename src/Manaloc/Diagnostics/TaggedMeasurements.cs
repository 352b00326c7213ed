using System.Diagnostics.Metrics;

namespace Manaloc.Diagnostics;

/// <summary>
/// Builds an observable instrument's measurements over live instances: one measurement per tag set
/// (<see cref="ManalocTelemetry.NameTag"/>, <see cref="ManalocTelemetry.KindTag"/> and, for per-type instruments,
/// <see cref="ManalocTelemetry.TypeTag"/>), combining the instances that share it.
/// </summary>
/// <remarks>Instances may share a name (two unnamed pools, two containers registering the same options). One measurement
/// each would repeat a tag set within one observation, which OpenTelemetry leaves to the SDK (the .NET SDK keeps one of
/// them, dropping the others' figures), so their figures are combined here: added for counts and bytes, the largest for a
/// high-water gauge. Runs only when a listener observes, never on the instances' own paths.</remarks>
internal sealed class TaggedMeasurements<T>(Func<T, T, T> combine) where T : struct
{
    private readonly Dictionary<(string? Name, string Kind, string? Type), T> _values = [];

    /// <summary>Counts and bytes: instances sharing a tag set add up.</summary>
    public static TaggedMeasurements<T> Summed(Func<T, T, T> add) => new(add);

    /// <summary>Adds one instance's figure under its tags (<paramref name="name"/> null: no name tag).</summary>
    public void Add(T value, string? name, string kind, string? type = null)
    {
        var tags = (name, kind, type);
        _values[tags] = _values.TryGetValue(tags, out T seen) ? combine(seen, value) : value;
    }

    /// <summary>One measurement per distinct tag set.</summary>
    public List<Measurement<T>> ToMeasurements()
    {
        var result = new List<Measurement<T>>(_values.Count);
        foreach (var ((name, kind, type), value) in _values)
        {
            var tags = new List<KeyValuePair<string, object?>>(3);
            if (name is not null) tags.Add(new(ManalocTelemetry.NameTag, name));
            tags.Add(new(ManalocTelemetry.KindTag, kind));
            if (type is not null) tags.Add(new(ManalocTelemetry.TypeTag, type));
            result.Add(new Measurement<T>(value, tags));
        }
        return result;
    }
}
