using System.Runtime.CompilerServices;
using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>AddOrUpdate on value structs with padding: whatever the padding bytes hold (in the map, in the caller's
/// values, in the copies the JIT makes), every call applies its update once and none retries forever.</summary>
public sealed unsafe class ConcurrentNativeMapPaddingTests
{
    private const int Increments = 20_000;
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    public static TheoryData<string> PaddedTypes => ["byte+long", "int+long", "bool+double", "3 bytes+int"];

    [Theory]
    [MemberData(nameof(PaddedTypes))]
    public void AddOrUpdate_on_a_value_with_dirty_padding_calls_the_factory_once_per_call(string type)
        => Run(type, new SingleThread());

    [Theory]
    [MemberData(nameof(PaddedTypes))]
    public void AddOrUpdate_whose_read_copy_has_other_padding_than_the_map_applies_its_update_once(string type)
        => Run(type, new PaddingDiffersFromTheRead());

    [Theory]
    [MemberData(nameof(PaddedTypes))]
    public void GetOrAdd_then_AddOrUpdate_on_a_value_with_dirty_padding_counts_exactly(string type)
        => Run(type, new AfterGetOrAdd());

    [Theory]
    [MemberData(nameof(PaddedTypes))]
    public void Two_threads_incrementing_a_value_with_dirty_padding_count_exactly_and_finish(string type)
        => Run(type, new TwoThreads());

    [Fact]
    public void The_test_values_have_the_padding_the_tests_dirty()
    {
        Assert.Equal(16, sizeof(ByteLong));
        Assert.Equal(16, sizeof(IntLong));
        Assert.Equal(16, sizeof(BoolDouble));
        Assert.Equal(8, sizeof(ThreeBytesInt));
    }

    [Fact]
    public void TryUpdate_and_TryRemove_compare_field_values_not_padding()
    {
        using var map = new ConcurrentNativeMap<long, ByteLong>();
        Assert.True(map.TryAdd(1, Dirty(ByteLong.Of(4), 0x11)));
        Assert.True(map.TryAdd(2, Dirty(ByteLong.Of(8), 0x22)));
        DirtyStoredPadding(map, 1, 0x99);
        Assert.False(map.TryUpdate(1, ByteLong.Of(6), Dirty(ByteLong.Of(5), 0x99)));
        Assert.True(map.TryUpdate(1, ByteLong.Of(5), Dirty(ByteLong.Of(4), 0x44)));
        Assert.Equal(5, map[1].Count);
        Assert.True(map.TryRemove(new KeyValuePair<long, ByteLong>(2, Dirty(ByteLong.Of(8), 0x55))));
        Assert.False(map.ContainsKey(2));
    }

    private static void Run(string type, IScenario scenario)
    {
        switch (type)
        {
            case "byte+long": scenario.Run<ByteLong>(); break;
            case "int+long": scenario.Run<IntLong>(); break;
            case "bool+double": scenario.Run<BoolDouble>(); break;
            case "3 bytes+int": scenario.Run<ThreeBytesInt>(); break;
            default: throw new ArgumentOutOfRangeException(nameof(type), type, "no such padded type");
        }
    }

    private interface IScenario
    {
        void Run<T>() where T : unmanaged, IPaddedCounter<T>;
    }

    private sealed class SingleThread : IScenario
    {
        public void Run<T>() where T : unmanaged, IPaddedCounter<T>
        {
            using var map = new ConcurrentNativeMap<long, T>();
            Assert.True(map.TryAdd(7, Dirty(T.Of(0), 0xAB)));
            DirtyStoredPadding(map, 7, 0xCD);
            for (long i = 1; i <= 1_000; i++)
            {
                int calls = 0;
                T result = map.AddOrUpdate(7, T.Of(-1), (_, current) =>
                {
                    // One thread, nothing else writes: a second call means the unchanged check failed on equal fields.
                    if (++calls > 1) throw new InvalidOperationException($"the update factory ran {calls} times for one AddOrUpdate on one thread");
                    return Dirty(T.Of(current.Count + 1), (byte)(0x10 + calls));
                });
                Assert.Equal(i, result.Count);
                Assert.Equal(1, calls);
            }
            Assert.True(map.TryGetValue(7, out T final));
            Assert.Equal(1_000, final.Count);
        }
    }

    /// <summary>Whether a JIT copies a padded struct byte for byte or field by field is its choice: this makes the copy
    /// the update started from differ from the map's bytes in padding only, on every call, whatever the JIT does.</summary>
    private sealed class PaddingDiffersFromTheRead : IScenario
    {
        public void Run<T>() where T : unmanaged, IPaddedCounter<T>
        {
            using var map = new ConcurrentNativeMap<long, T>();
            Assert.True(map.TryAdd(5, T.Of(0)));
            for (long i = 1; i <= 100; i++)
            {
                int calls = 0;
                T result = map.AddOrUpdate(5, T.Of(-1), (_, current) =>
                {
                    if (++calls > 1) throw new InvalidOperationException($"the update factory ran {calls} times for one AddOrUpdate on one thread");
                    // Padding only (no field changes, no write through the map): as if the read's copy had lost the padding.
                    DirtyStoredPadding(map, 5, (byte)(0x80 + i));
                    return T.Of(current.Count + 1);
                });
                Assert.Equal(i, result.Count);
            }
            Assert.True(map.TryGetValue(5, out T final));
            Assert.Equal(100, final.Count);
        }
    }

    private sealed class AfterGetOrAdd : IScenario
    {
        public void Run<T>() where T : unmanaged, IPaddedCounter<T>
        {
            using var map = new ConcurrentNativeMap<long, T>();
            for (long key = 0; key < 64; key++)
            {
                Assert.Equal(0, map.GetOrAdd(key, static _ => Dirty(T.Of(0), 0xEE)).Count);
                if (key % 2 == 0) DirtyStoredPadding(map, key, 0x5A);
                int calls = 0;
                for (long i = 1; i <= 50; i++)
                {
                    T result = map.AddOrUpdate(key, static _ => T.Of(-1), (_, current) =>
                    {
                        if (++calls > i) throw new InvalidOperationException($"the update factory ran twice for one AddOrUpdate on one thread");
                        return Dirty(T.Of(current.Count + 1), 0x77);
                    });
                    Assert.Equal(i, result.Count);
                }
                Assert.Equal(50, calls);
            }
            Assert.Equal(64, map.Count);
            foreach (var entry in map) Assert.Equal(50, entry.Value.Count);
        }
    }

    private sealed class TwoThreads : IScenario
    {
        public void Run<T>() where T : unmanaged, IPaddedCounter<T>
        {
            using var map = new ConcurrentNativeMap<long, T>();
            Assert.True(map.TryAdd(3, T.Of(0)));
            DirtyStoredPadding(map, 3, 0xFF);
            // A retry loop that never ends must fail the test, not hang the run: the factories give up once told to.
            using var abandon = new CancellationTokenSource();
            var token = abandon.Token;
            var workers = Enumerable.Range(0, 2).Select(w => Task.Factory.StartNew(() =>
            {
                for (int i = 0; i < Increments; i++)
                {
                    map.AddOrUpdate(3, T.Of(-1_000_000), (_, current) =>
                    {
                        token.ThrowIfCancellationRequested();
                        return Dirty(T.Of(current.Count + 1), (byte)(w == 0 ? 0x33 : 0xCC));
                    });
                }
            }, token, TaskCreationOptions.LongRunning, TaskScheduler.Default)).ToArray();
            bool finished = Task.WaitAll(workers, Patience);
            if (!finished) abandon.Cancel();
            Assert.True(finished, $"AddOrUpdate did not finish {Increments} increments per thread within {Patience}: a retry that never ends");
            Assert.True(map.TryGetValue(3, out T final));
            Assert.Equal(2 * Increments, final.Count);
        }
    }

    /// <summary>A copy of <paramref name="value"/> whose padding bytes hold <paramref name="fill"/>.</summary>
    private static T Dirty<T>(T value, byte fill) where T : unmanaged, IPaddedCounter<T>
    {
        T copy = value;
        var bytes = new Span<byte>(&copy, sizeof(T));
        foreach (int offset in T.PaddingOffsets) bytes[offset] = fill;
        return copy;
    }

    /// <summary>Sets the padding of the value the map holds for <paramref name="key"/> (on a quiet map, one thread).</summary>
    private static void DirtyStoredPadding<T>(ConcurrentNativeMap<long, T> map, long key, byte fill) where T : unmanaged, IPaddedCounter<T>
    {
        var table = map.WriterTable;
        byte* entry = table.Find(key, table.Hash(key), out _);
        Assert.True(entry != null);
        byte* value = (byte*)Unsafe.AsPointer(ref NativeHashTable<long, T>.ValueAt(entry));
        foreach (int offset in T.PaddingOffsets) value[offset] = fill;
        Assert.Equal(fill, value[T.PaddingOffsets[0]]);
    }

    private interface IPaddedCounter<T> where T : unmanaged
    {
        static abstract T Of(long count);
        static abstract int[] PaddingOffsets { get; }
        long Count { get; }
    }

    private struct ByteLong : IPaddedCounter<ByteLong>
    {
        public byte Tag;
        public long Value;
        public static ByteLong Of(long count) => new() { Tag = 9, Value = count };
        public static int[] PaddingOffsets { get; } = [1, 2, 3, 4, 5, 6, 7];
        public readonly long Count => Value;
    }

    private struct IntLong : IPaddedCounter<IntLong>
    {
        public int Tag;
        public long Value;
        public static IntLong Of(long count) => new() { Tag = 9, Value = count };
        public static int[] PaddingOffsets { get; } = [4, 5, 6, 7];
        public readonly long Count => Value;
    }

    private struct BoolDouble : IPaddedCounter<BoolDouble>
    {
        public bool Flag;
        public double Value;
        public static BoolDouble Of(long count) => new() { Flag = true, Value = count };
        public static int[] PaddingOffsets { get; } = [1, 2, 3, 4, 5, 6, 7];
        public readonly long Count => (long)Value;
    }

    private struct ThreeBytesInt : IPaddedCounter<ThreeBytesInt>
    {
        public byte A, B, C;
        public int Value;
        public static ThreeBytesInt Of(long count) => new() { A = 1, B = 2, C = 3, Value = (int)count };
        public static int[] PaddingOffsets { get; } = [3];
        public readonly long Count => Value;
    }
}
