using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Runtime.CompilerServices;
using Manaloc.Collections;
using Manaloc.Diagnostics;

namespace Manaloc.Tests.Collections;

/// <summary>A value too large for an entry (with an 8-byte key, above the 1024-byte limit).</summary>
[System.Runtime.CompilerServices.InlineArray(1020)]
public struct Huge
{
    private byte _element;
}

/// <summary>The largest value an 8-byte key allows (1008 bytes an entry): a capacity of int.MaxValue is terabytes of table.</summary>
[System.Runtime.CompilerServices.InlineArray(1000)]
public struct LargestValue
{
    private byte _element;
}

public sealed class NativeMapTests
{
    [Fact]
    public void A_hasher_that_throws_during_a_split_leaves_the_map_as_it_was()
    {
        // A split rehashes the chain it divides: a hasher that throws there (user code) must not leave entries in both
        // halves or in neither. Each of these keys makes the hasher throw once, in whichever split first rehashes it.
        var throwOnce = new HashSet<long>();
        using var map = new NativeMap<long, long>(new NativeMapOptions<long> { Hasher = k => throwOnce.Remove(k) ? throw new InvalidOperationException("hasher") : (ulong)k });
        var model = new Dictionary<long, long>();
        for (long k = 0; k < 100; k++) { map[k] = k; model[k] = k; }
        throwOnce.UnionWith([5, 17, 33, 40, 41, 42, 43, 44, 60, 99]);
        int threw = 0;
        for (long k = 100; k < 5000; k++)
        {
            try { map[k] = k; model[k] = k; }
            catch (InvalidOperationException) { threw++; Assert.False(map.ContainsKey(k)); }
        }
        Assert.Equal(10, threw); // every bucket of the first 100 keys was split on the way to 5000 entries
        Assert.Equal(model.Count, map.Count);
        var seen = new Dictionary<long, long>();
        foreach (var e in map) Assert.True(seen.TryAdd(e.Key, e.Value), $"key {e.Key} enumerated twice");
        Assert.Equal(model, seen);
        foreach (var (k, v) in model) Assert.Equal(v, map[k]);
    }

    [Fact]
    public void Adding_a_key_or_clearing_invalidates_an_enumerator_but_removing_and_overwriting_do_not()
    {
        using var map = new NativeMap<long, long>();
        for (long k = 0; k < 100; k++) map[k] = k;

        var seen = new HashSet<long>();
        foreach (var e in map)
        {
            map[e.Key] = e.Value + 1000;            // overwrite: allowed, as in Dictionary
            if (e.Key % 2 == 0) map.Remove(e.Key);  // remove: allowed, as in Dictionary
            Assert.True(seen.Add(e.Key));
        }
        Assert.Equal(100, seen.Count);
        Assert.Equal(50, map.Count);

        var enumerator = map.GetEnumerator();
        Assert.True(enumerator.MoveNext());
        map.TryAdd(1_000, 1);
        Assert.Throws<InvalidOperationException>(() => enumerator.MoveNext());

        enumerator = map.GetEnumerator();
        map.Clear();
        Assert.Throws<InvalidOperationException>(() => enumerator.MoveNext());

        enumerator = map.GetEnumerator();
        map.Dispose();
        Assert.Throws<ObjectDisposedException>(() => enumerator.MoveNext());
    }

    [Fact]
    public void The_non_generic_Current_throws_before_the_first_entry_and_after_the_last_as_Dictionarys_does()
    {
        using var map = new NativeMap<long, int>();
        map.TryAdd(7, 70);
        var reference = new Dictionary<long, int> { [7] = 70 };
        IEnumerator<KeyValuePair<long, int>> ours = map.GetEnumerator(), theirs = reference.GetEnumerator();

        Assert.Throws<InvalidOperationException>(() => ((System.Collections.IEnumerator)theirs).Current);
        Assert.Throws<InvalidOperationException>(() => ((System.Collections.IEnumerator)ours).Current);
        Assert.True(ours.MoveNext());
        Assert.Equal(new KeyValuePair<long, int>(7, 70), ((System.Collections.IEnumerator)ours).Current);
        Assert.False(ours.MoveNext());
        Assert.False(theirs.MoveNext() && theirs.MoveNext());
        Assert.Throws<InvalidOperationException>(() => ((System.Collections.IEnumerator)theirs).Current);
        Assert.Throws<InvalidOperationException>(() => ((System.Collections.IEnumerator)ours).Current);
        ours.Reset();
        Assert.Throws<InvalidOperationException>(() => ((System.Collections.IEnumerator)ours).Current);
        Assert.Equal(default, ours.Current); // the generic Current stays default there, as Dictionary's
    }

    [Fact]
    public void Reset_after_Dispose_throws_ObjectDisposedException()
    {
        var map = new NativeMap<long, int>();
        map.TryAdd(1, 1);
        var enumerator = map.GetEnumerator();
        map.Dispose();
        Assert.Throws<ObjectDisposedException>(() => enumerator.Reset());
    }

    [Fact]
    public void GetValueRefOrAddDefault_updates_in_place_with_one_lookup()
    {
        using var map = new NativeMap<int, long>();
        for (int i = 0; i < 10_000; i++)
        {
            ref long counter = ref map.GetValueRefOrAddDefault(i % 100, out bool exists);
            Assert.Equal(i >= 100, exists);
            counter++;
        }
        for (int k = 0; k < 100; k++) Assert.Equal(100, map[k]);
        Assert.True(Unsafe.IsNullRef(ref map.GetValueRefOrNullRef(100)));
        map.GetValueRefOrNullRef(7) = -1;
        Assert.Equal(-1, map[7]);
    }

    [Fact]
    public void Guid_keys_spread_and_are_found()
    {
        using var map = new NativeMap<Guid, int>();
        var keys = Enumerable.Range(0, 200_000).Select(i => new Guid(i, 0, 0, new byte[8])).ToArray(); // sequential-looking Guids
        for (int i = 0; i < keys.Length; i++) Assert.True(map.TryAdd(keys[i], i));
        for (int i = 0; i < keys.Length; i++) Assert.Equal(i, map[keys[i]]);
        // 1 tag + 20 bytes of entry at ~80% load, no long overflow chains (the block made ready for growth is not the table's spread)
        Assert.InRange((map.NativeBytes - map.Table.SpareBlockBytes) / (double)map.Count, 20, 40);
    }

    [Fact]
    public void A_key_and_value_too_large_for_an_entry_are_refused_at_construction_with_the_sizes()
    {
        var e = Assert.Throws<NotSupportedException>(() => new NativeMap<long, Huge>());
        Assert.Contains("NativeMap<long, Huge>", e.Message, StringComparison.Ordinal);
        Assert.Contains("1028", e.Message, StringComparison.Ordinal);
        Assert.Contains("1024", e.Message, StringComparison.Ordinal);
        Assert.Throws<NotSupportedException>(() => new ConcurrentNativeMap<long, Huge>());
    }

    [Fact]
    public void An_initial_capacity_beyond_the_memory_the_process_may_use_is_refused_before_anything_is_allocated()
    {
        // Some 3.8 TB of table: no test machine has it. Unchecked, the constructor wrote every bucket's header and the
        // process took the machine's memory page by page (an overcommitting kernel refuses none of it) until it was killed.
        var options = new NativeMapOptions<long> { InitialCapacity = int.MaxValue, Name = "presized" };
        var e = Assert.Throws<OutOfMemoryException>(() => new NativeMap<long, LargestValue>(options));
        Assert.Contains("NativeMap<long, LargestValue> 'presized'", e.Message, StringComparison.Ordinal);
        Assert.Contains($"InitialCapacity of {int.MaxValue}", e.Message, StringComparison.Ordinal);
        Assert.Contains("nothing was allocated", e.Message, StringComparison.Ordinal);
        Assert.Throws<OutOfMemoryException>(() => new ConcurrentNativeMap<long, LargestValue>(options));
        // A capacity the process can hold is still taken whole, also above the size at which the check asks the GC (64 MiB).
        using var map = new NativeMap<long, long>(new NativeMapOptions<long> { InitialCapacity = 3_000_000 });
        Assert.True(map.NativeBytes > 64L << 20, $"{map.NativeBytes} bytes for a table of 3,000,000 entries");
    }

    [Fact]
    public void ToString_names_the_types_the_name_and_the_count()
    {
        var map = new NativeMap<long, Payload>(new NativeMapOptions<long> { Name = "orders" });
        map[1] = default;
        Assert.Equal("NativeMap<long, Payload> 'orders' (1 entry)", map.ToString());
        map.Dispose();
        Assert.Equal("NativeMap<long, Payload> 'orders' (disposed)", map.ToString());
    }

    [Fact]
    public void The_memory_meter_reports_entries_bytes_and_resizes_by_name()
    {
        using var map = new ConcurrentNativeMap<long, Payload>(new NativeMapOptions<long> { Name = "metered-map" });
        for (long k = 0; k < 50_000; k++) map[k] = Payload.Of(k);
        var seen = new Dictionary<string, long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocTelemetry.MemoryMeterName && instrument.Name.StartsWith("manaloc.map.", StringComparison.Ordinal)) l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == ManalocTelemetry.NameTag && (string?)tag.Value == "metered-map") seen[instrument.Name] = value;
            }
        });
        listener.Start();
        // The growth thread may still be making the next huge-page block ready (2 MiB counted in the native bytes once
        // it is): the meter reads the bytes at one moment between these two reads, so it reads one of them.
        long before = map.NativeBytes;
        listener.RecordObservableInstruments();
        long after = map.NativeBytes;
        Assert.Equal(50_000, seen["manaloc.map.entries"]);
        long reported = seen["manaloc.map.native_bytes"];
        Assert.True(reported == before || reported == after, $"The meter reported {reported} native bytes; the map read {before} before and {after} after.");
        Assert.True(seen["manaloc.map.resizes"] > 1000);
    }

    private sealed class LeakListener : EventListener
    {
        public readonly List<string> Leaks = [];
        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == ManalocTelemetry.EventSourceName) EnableEvents(source, EventLevel.Warning);
        }
        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventId == 1 && e.Payload is { Count: 3 } p)
            {
                lock (Leaks) Leaks.Add($"{p[0]}|{p[1]}");
            }
        }
    }

    [Fact]
    public void A_map_never_disposed_appears_in_the_leak_report()
    {
        using var listener = new LeakListener();
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Forget()
        {
            var map = new NativeMap<long, int>(new NativeMapOptions<long> { Name = "forgotten-map" });
            for (long k = 0; k < 3; k++) map[k] = 1;
            var shared = new ConcurrentNativeMap<long, int>(new NativeMapOptions<long> { Name = "forgotten-shared" });
            shared[1] = 1;
        }
        Forget();
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        lock (listener.Leaks)
        {
            Assert.Contains(listener.Leaks, l => l.StartsWith("NativeMap<long, int> 'forgotten-map', never disposed", StringComparison.Ordinal) && l.EndsWith("|3", StringComparison.Ordinal));
            // A concurrent map's table has a finalizer of its own that gives the memory back; a plain map's memory is kept.
            Assert.Contains(listener.Leaks, l => l.StartsWith("ConcurrentNativeMap<long, int> 'forgotten-shared', never disposed (its native memory is given back", StringComparison.Ordinal));
            Assert.Contains(listener.Leaks, l => l.StartsWith("NativeMap<long, int> 'forgotten-map', never disposed (its native memory is kept", StringComparison.Ordinal));
        }
    }

    [Fact]
    public void A_table_above_2_GiB_holds_65M_entries_when_MANALOC_LARGE_MAP_TESTS_is_set()
    {
        if (Environment.GetEnvironmentVariable("MANALOC_LARGE_MAP_TESTS") != "1") return; // opt-in: about 3 GiB of memory
        const long count = 65_000_000;
        using var map = new NativeMap<long, Payload>();
        for (long k = 0; k < count; k++) map[k] = Payload.Of(k);
        Assert.True(map.NativeBytes > 2L << 30, $"{map.NativeBytes} bytes");
        Assert.Equal(count, map.Count);
        for (long k = 0; k < count; k += 997) Assert.Equal(Payload.Of(k), map[k]);
        long seen = 0;
        foreach (var e in map)
        {
            if (e.Value.A != e.Key) Assert.Fail($"key {e.Key} holds {e.Value}");
            seen++;
        }
        Assert.Equal(count, seen);
    }

    [Fact]
    public void The_inlined_lookup_uses_the_current_table_without_a_hasher_and_none_with_one_across_Clear_and_Dispose()
    {
        // The inlined lookup hashes with the default: a map with a hasher must never offer it a table (its keys sit in the
        // hasher's buckets, so a default-hash probe would report them absent), and a map without one must offer the table
        // Clear made (the old one is freed); after Dispose neither offers one, and the lookup throws.
        using var plain = new NativeMap<long, long>();
        using var hashed = new NativeMap<long, long>(new NativeMapOptions<long> { Hasher = k => (ulong)k * 31 });
        Assert.NotNull(plain.InlineFindTable);
        Assert.Same(plain.CurrentTable, plain.InlineFindTable);
        Assert.Null(hashed.InlineFindTable);
        for (long k = 0; k < 5_000; k++)
        {
            plain.TryAdd(k, k);
            hashed.TryAdd(k, k);
        }
        plain.Clear();
        hashed.Clear();
        Assert.Same(plain.CurrentTable, plain.InlineFindTable);
        Assert.Null(hashed.InlineFindTable);
        for (long k = 0; k < 5_000; k++)
        {
            plain.TryAdd(k, -k);
            hashed.TryAdd(k, -k);
        }
        for (long k = 0; k < 5_000; k++)
        {
            Assert.True(plain.TryGetValue(k, out long a));
            Assert.Equal(-k, a);
            Assert.True(hashed.TryGetValue(k, out long b));
            Assert.Equal(-k, b);
        }
        Assert.False(plain.TryGetValue(5_000, out _));
        Assert.False(hashed.TryGetValue(5_000, out _));
        plain.Dispose();
        hashed.Dispose();
        Assert.Null(plain.InlineFindTable);
        Assert.Throws<ObjectDisposedException>(() => plain.TryGetValue(1, out _));
        Assert.Throws<ObjectDisposedException>(() => hashed.TryGetValue(1, out _));
    }
}
