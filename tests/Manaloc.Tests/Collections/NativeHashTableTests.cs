using System.Runtime.CompilerServices;
using Manaloc.Collections;
using Manaloc.Platform;
using Manaloc.Tests.Platform;

namespace Manaloc.Tests.Collections;

public sealed unsafe class NativeHashTableTests
{
    private static NativeHashTable<long, Payload> NewConcurrentTable(int entries)
    {
        var table = new NativeHashTable<long, Payload>(0, null, "test-table", concurrent: true);
        for (long k = 1; k <= entries; k++) table.Add(k, table.Hash(k), Payload.Of(k));
        return table;
    }

    [Fact]
    public void A_read_of_a_released_table_is_discarded_even_when_everything_it_read_validates()
    {
        // The released flag alone, every page whole: the sequences validate and the value is right, so only the flag
        // check can make the read retry. Without it a read that took a tag before the pages were discarded and the
        // value after would keep a torn or zero value.
        var table = NewConcurrentTable(5_000);
        try
        {
            Assert.Equal(1, table.TryGetConcurrentOnce(42, table.Hash(42), out var value));
            Assert.Equal(Payload.Of(42), value);
            Assert.Equal(0, table.TryGetConcurrentOnce(99_999, table.Hash(99_999), out _));
            var buffer = new KeyValuePair<long, Payload>[64];
            Assert.True(table.SnapshotConcurrent(0, buffer, out _, out _) >= 0);

            table.MarkReleasedForTests();

            Assert.Equal(-1, table.TryGetConcurrentOnce(42, table.Hash(42), out _));
            Assert.Equal(-1, table.TryGetConcurrentOnce(99_999, table.Hash(99_999), out _));
            Assert.Equal(-1, table.TryGetConcurrentOnce(42, table.Hash(42), out _, out _, out _));
            Assert.Equal(NativeHashTable<long, Payload>.SnapshotOfReleased, table.SnapshotConcurrent(0, buffer, out _, out _));
        }
        finally
        {
            table.Free();
        }
    }

    [Fact]
    public void Releasing_keeps_the_split_state_readers_compute_their_buckets_from()
    {
        // The released flag shares the split state's word: a read that starts on a released table must still compute a
        // bucket inside the directory (from the depth and split pointer as they were) and fail only its last check.
        var table = NewConcurrentTable(20_000); // past several splits: a depth above 0 and a split pointer inside a round
        try
        {
            long buckets = table.BucketCount;
            Assert.True(buckets > 1000);
            Assert.False(table.IsReleased);
            var chains = new Dictionary<long, nint>();
            for (long k = 1; k <= 20_000; k += 13)
            {
                Assert.Equal(1, table.TryGetConcurrentOnce(k, table.Hash(k), out _, out byte* primary, out _));
                chains[k] = (nint)primary;
            }

            table.MarkReleasedForTests();

            Assert.True(table.IsReleased);
            Assert.Equal(buckets, table.BucketCount);
            foreach (var (k, chain) in chains)
            {
                Assert.Equal(-1, table.TryGetConcurrentOnce(k, table.Hash(k), out _, out byte* primary, out _));
                Assert.Equal(chain, (nint)primary);
            }
        }
        finally
        {
            table.Free();
        }
    }

    [Fact]
    public void A_read_that_finds_its_chain_sequence_odd_retries_its_hit_and_its_miss_even_when_nothing_else_changed()
    {
        // A read keeps the sequence as the even number at or below it, so its one re-read comparison is also the odd test:
        // with a writer in the chain (odd) and nothing else touched, a hit and a miss of that chain must both retry.
        var table = NewConcurrentTable(5_000);
        try
        {
            const long present = 42;
            Assert.Equal(1, table.TryGetConcurrentOnce(present, table.Hash(present), out _, out byte* primary, out uint sequence));
            Assert.Equal(0u, sequence & 1);
            long absent = 100_000;
            while (table.TryGetConcurrentOnce(absent, table.Hash(absent), out _, out byte* chain, out _) != 0 || chain != primary) absent++;

            ref uint version = ref *(uint*)(primary + NativeHashTable<long, Payload>.VersionOffset);
            version++; // odd: as a writer's BeginWrite leaves it
            Assert.Equal(-1, table.TryGetConcurrentOnce(present, table.Hash(present), out _));
            Assert.Equal(-1, table.TryGetConcurrentOnce(absent, table.Hash(absent), out _));
            Assert.Equal(-1, table.TryGetConcurrentOnce(present, table.Hash(present), out _, out _, out _));

            version++; // even again: as EndWrite leaves it
            Assert.Equal(1, table.TryGetConcurrentOnce(present, table.Hash(present), out var value, out _, out uint after));
            Assert.Equal(Payload.Of(present), value);
            Assert.Equal(sequence + 2, after);
            Assert.Equal(0, table.TryGetConcurrentOnce(absent, table.Hash(absent), out _));
        }
        finally
        {
            table.Free();
        }
    }

    [Fact]
    public void Every_bucket_header_a_read_reaches_lies_inside_its_own_segment_block()
    {
        // The directory holds each segment's address less the headers of the buckets before it (a lookup adds the bucket's
        // index times the header size, unmasked): a wrong entry would send reads outside the segment.
        var table = NewConcurrentTable(200_000); // many segments, the first one grown by copies
        try
        {
            int perSegment = 1 << NativeHashTable<long, Payload>.SegmentShift;
            Assert.True(table.SegmentCount > 4);
            var seen = new HashSet<int>();
            for (long k = 1; k <= 200_000; k += 7)
            {
                Assert.Equal(1, table.TryGetConcurrentOnce(k, table.Hash(k), out var value, out byte* primary, out _));
                Assert.Equal(Payload.Of(k), value);
                int segment = Enumerable.Range(0, table.SegmentCount).SingleOrDefault(s =>
                    (nint)primary >= table.SegmentAt(s) && (nint)primary < table.SegmentAt(s) + perSegment * NativeHashTable<long, Payload>.HeaderBytes, -1);
                Assert.NotEqual(-1, segment);
                Assert.Equal(0, ((nint)primary - table.SegmentAt(segment)) % NativeHashTable<long, Payload>.HeaderBytes);
                seen.Add(segment);
            }
            Assert.Equal(table.SegmentCount, seen.Count);
        }
        finally
        {
            table.Free();
        }
    }

    [LinuxFact]
    public void Released_pages_read_as_zeros_and_every_read_of_them_is_discarded_until_the_finalizer_unmaps_them()
    {
        Assert.True(PageBlocks.CanDiscard);
        var table = NewConcurrentTable(200_000); // segments, overflow chunks and huge-page blocks
        Assert.True(table.NativeBytes > 0);
        table.ReleaseUnderReaders();
        Assert.True(table.IsReleased);
        Assert.Equal(0, table.NativeBytes);
        Assert.True(table.BlocksHeldUntilFinalized > 2);
        // Still mapped: a reader that was inside reads zeros or old bytes (no fault) and discards the read.
        for (long k = 1; k <= 200_000; k += 97) Assert.Equal(-1, table.TryGetConcurrentOnce(k, table.Hash(k), out _));
        var buffer = new KeyValuePair<long, Payload>[64];
        Assert.Equal(NativeHashTable<long, Payload>.SnapshotOfReleased, table.SnapshotConcurrent(0, buffer, out _, out _));
        table.ReleaseUnderReaders(); // idempotent
        table.Free();                // a no-op after the release: the finalizer owns the addresses
        Assert.True(table.BlocksHeldUntilFinalized > 2);
    }

    [Fact]
    public void An_unreachable_table_is_finalized_whether_released_freed_or_neither()
    {
        var weak = MakeGarbage();
        for (int i = 0; i < 3 && weak.Any(w => w.IsAlive); i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.All(weak, w => Assert.False(w.IsAlive));

        [MethodImpl(MethodImplOptions.NoInlining)]
        static WeakReference[] MakeGarbage()
        {
            var released = NewConcurrentTable(20_000);
            if (PageBlocks.CanDiscard) released.ReleaseUnderReaders();
            var freed = NewConcurrentTable(20_000);
            freed.Free();
            var neither = NewConcurrentTable(20_000); // a map never disposed: its table's finalizer gives the memory back
            return [new WeakReference(released, trackResurrection: true), new WeakReference(freed, trackResurrection: true), new WeakReference(neither, trackResurrection: true)];
        }
    }

    [Fact]
    public void The_bucket_of_a_hash_is_its_low_d_bits_or_its_low_d_plus_1_bits_below_the_split_pointer_released_or_not()
    {
        // The branch-free bucket index (bzhi of a count the comparison's sign makes d or d+1) against linear hashing's
        // definition, at every depth, at the ends of a round and inside it, and with the released flag set: a read that
        // starts on a released table must still address the bucket it addressed before.
        var random = new Random(7);
        for (int depth = 0; depth < 40; depth++)
        {
            long round = 1L << depth;
            long[] pointers = [0, 1, round / 2, round - 1, random.NextInt64(round)];
            foreach (long p in pointers)
            {
                if (p >= round) continue; // p < 2^d
                long state = NativeHashTable<long, Payload>.StateOf(depth, p);
                for (int i = 0; i < 200; i++)
                {
                    ulong hash = (ulong)random.NextInt64() ^ ((ulong)random.Next() << 63);
                    ulong low = hash & ((1UL << depth) - 1);
                    long expected = (long)low < p ? (long)(hash & ((2UL << depth) - 1)) : (long)low;
                    Assert.Equal(expected, NativeHashTable<long, Payload>.BucketIndex(hash, state));
                    Assert.Equal(expected, NativeHashTable<long, Payload>.BucketIndex(hash, state | NativeHashTable<long, Payload>.ReleasedBit));
                    Assert.True(expected < round + p); // a bucket that exists
                }
            }
        }
    }
}
