using Manaloc.Collections;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>A value whose three fields are written equal: a torn read shows unequal fields. Its own type, so the
/// table instantiation for it is created after the test turns the interleaving switch on.</summary>
public readonly record struct Triple(long A, long B, long C)
{
    public static Triple Of(long v) => new(v, v, v);
    public bool IsWhole => A == B && B == C;
}

/// <summary>
/// ConcurrentNativeMap under Coyote: inserts that split buckets (a resize in progress all along), removes and
/// updates on one thread, lock-free reads and an enumeration on others. Coyote sees no native load or store, so the
/// test turns on the library's interleaving switch: every value copy is split in two halves with a scheduling point
/// (a <c>Volatile</c> call) between, and the sequence numbers, split state and directory are <c>Volatile</c>
/// accesses already: a reader can be switched out in the middle of copying a value while a writer rewrites it.
/// </summary>
public sealed class NativeMapSchedules(ITestOutputHelper output)
{
    static NativeMapSchedules() => AppContext.SetSwitch("Manaloc.Collections.InterleaveNativeAccess", true);

    // Invariants: a stable key (present before the threads start, never removed) is always found (no lost entry) with
    // a whole value (no torn value); one enumeration never yields a key twice and yields every stable key.
    internal static void ReadsDuringResize()
    {
        var map = new ConcurrentNativeMap<long, Triple>();
        const int stable = 12;
        for (long k = 0; k < stable; k++) map[k] = Triple.Of(k);
        var writer = new Thread(() =>
        {
            for (long k = stable; k < stable + 24; k++) map.TryAdd(k, Triple.Of(k)); // from 12 to 36 entries: several splits
            map[3] = Triple.Of(3 + 1000);
            map.TryRemove(stable + 5, out _);
            map.AddOrUpdate(4, Triple.Of(4), (_, v) => Triple.Of(v.A + 1000));
        });
        var reader = new Thread(() =>
        {
            for (long k = 0; k < stable; k++)
            {
                Specification.Assert(map.TryGetValue(k, out var v), $"stable key {k} lost during a resize");
                Specification.Assert(v.IsWhole && v.A % 1000 == k, $"torn or wrong value for {k}: {v}");
            }
        });
        var enumerator = new Thread(() =>
        {
            var seen = new HashSet<long>();
            foreach (var e in map)
            {
                Specification.Assert(seen.Add(e.Key), $"key {e.Key} seen twice by one enumeration");
                Specification.Assert(e.Value.IsWhole, $"torn value in enumeration: {e.Value}");
            }
            for (long k = 0; k < stable; k++) Specification.Assert(seen.Contains(k), $"enumeration missed stable key {k}");
        });
        writer.Start();
        reader.Start();
        enumerator.Start();
        writer.Join();
        reader.Join();
        enumerator.Join();
        Specification.Assert(map.Count == stable + 24 - 1, $"count {map.Count}");
        map.Dispose();
    }

    // At most 1,000 schedules each: at 10,000 this schedule alone took over 5 minutes of the CI step's 15, and the
    // schedules of the other types need the rest. Explorer.Iterations still lowers it.
    [CoyoteFact]
    public void Reads_and_enumeration_during_a_resize_lose_nothing_tear_nothing_and_repeat_nothing()
        => Assert.Equal(0, Explorer.Explore(ReadsDuringResize, output, iterations: Math.Min(Explorer.Iterations, 1_000), maxSteps: 20_000).Bugs);

    // Invariant: a read racing Dispose completes with the right value or throws ObjectDisposedException.
    internal static void DisposeRacesRead()
    {
        var map = new ConcurrentNativeMap<long, Triple>();
        for (long k = 0; k < 20; k++) map[k] = Triple.Of(k);
        var reader = new Thread(() =>
        {
            try
            {
                for (long k = 0; k < 20; k++)
                {
                    if (map.TryGetValue(k, out var v)) Specification.Assert(v == Triple.Of(k), $"wrong value {v} for {k}");
                    else Specification.Assert(false, $"key {k} missing before Dispose");
                }
            }
            catch (ObjectDisposedException)
            {
            }
        });
        reader.Start();
        map.Dispose();
        reader.Join();
    }

    [CoyoteFact]
    public void A_read_racing_Dispose_completes_or_throws_ObjectDisposedException()
        => Assert.Equal(0, Explorer.Explore(DisposeRacesRead, output, iterations: Math.Min(Explorer.Iterations, 1_000), maxSteps: 20_000).Bugs);
}
