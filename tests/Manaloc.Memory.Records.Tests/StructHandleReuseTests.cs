using System.Runtime.CompilerServices;
using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// Struct handles are 16 bytes with no managed reference; their checks stay safe and exact when the memory of their
/// records is reused, by the same TypeAllocator or by another one (a TypeAllocator's chunks are never freed, only reused).
/// </summary>
[Collection(nameof(ChunkReuse))]
public class StructHandleReuseTests
{
    [Fact]
    public void Struct_handles_are_sixteen_bytes_and_hold_no_managed_reference()
    {
        Assert.Equal(16, Unsafe.SizeOf<FooDataRef>()); // not 12: see TornHandleTests
        Assert.Equal(16, Unsafe.SizeOf<FooDataUncheckedRef>());
        Assert.Equal(16, Unsafe.SizeOf<RecordRef>());
        Assert.Equal(16, Unsafe.SizeOf<UncheckedRecordRef>());
        Assert.False(RuntimeHelpers.IsReferenceOrContainsReferences<FooDataRef>());
        Assert.False(RuntimeHelpers.IsReferenceOrContainsReferences<FooDataUncheckedRef>());
    }

    [Fact]
    public void Stale_handles_of_a_disposed_allocator_still_say_disposed_after_another_allocator_reuses_their_memory()
    {
        const int Count = 2000; // several 128 KiB chunks
        var first = new TypeAllocator(new TypeAllocatorOptions { Name = "first" });
        var stale = new ReuseRecordRef[Count];
        for (int i = 0; i < Count; i++)
        {
            stale[i] = ReuseRecordRef.New(first);
            stale[i].Last = i;
        }
        first.Dispose();

        using var second = new TypeAllocator(new TypeAllocatorOptions { Name = "second" });
        var live = new ReuseRecordRef[Count];
        for (int i = 0; i < Count; i++)
        {
            live[i] = ReuseRecordRef.New(second);
            live[i].Last = -i;
        }
        // The memory came back: at least one new record sits where an old one was.
        var oldAddresses = stale.Select(AddressOf).ToHashSet();
        Assert.Contains(live, r => oldAddresses.Contains(AddressOf(r)));

        foreach (var old in stale)
        {
            Assert.False(old.IsAllocated);
            var read = Assert.Throws<ObjectDisposedException>(() => old.Last);
            Assert.Contains("'first'", read.Message);
            Assert.Throws<ObjectDisposedException>(() => old.Last = 1);
            Assert.Contains("'first'", Assert.Throws<ObjectDisposedException>(() => old.Delete(second)).Message); // never frees second's record
        }
        for (int i = 0; i < Count; i++)
        {
            Assert.True(live[i].IsAllocated);
            Assert.Equal(-i, live[i].Last); // no stale write landed
            live[i].Delete(second);
        }
    }

    [Fact]
    public void Stale_handles_of_pooled_chunks_whose_pages_went_back_still_fail_with_the_right_exception()
    {
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "pooled" });
        var stale = Enumerable.Range(0, 3000).Select(i => { var r = ReuseRecordRef.New(allocator); r.Last = i; return r; }).ToArray();
        var deleted = stale[..1000];
        foreach (var r in deleted) r.Delete(allocator);
        allocator.Dispose(); // every chunk to the pool; on Linux its pages but the header's go back (they read as zeros)
        foreach (var r in deleted)
        {
            Assert.False(r.IsAllocated);
            Assert.ThrowsAny<InvalidOperationException>(() => r.Last); // deleted, then its allocator disposed: either is said
        }
        foreach (var r in stale[1000..])
        {
            Assert.False(r.IsAllocated);
            Assert.Contains("'pooled'", Assert.Throws<ObjectDisposedException>(() => r.Last).Message);
        }
        using var next = new TypeAllocator();
        var fresh = Enumerable.Range(0, 3000).Select(_ => ReuseRecordRef.New(next)).ToArray();
        Assert.All(fresh, r => Assert.Equal(0L, r.Last)); // zeroed, whatever the pages held
        Assert.All(stale, r => Assert.False(r.IsAllocated)); // no old generation matches a new one
        foreach (var r in fresh) r.Delete(next);
    }

    [Fact]
    public void Class_handles_of_a_disposed_allocator_say_disposed_when_another_allocator_reuses_their_memory()
    {
        var first = new TypeAllocator(new TypeAllocatorOptions { Name = "class first" });
        var stale = Enumerable.Range(0, 2000).Select(_ => first.New<IReuseRecord>()).ToArray();
        first.Dispose();
        using var second = new TypeAllocator();
        var live = Enumerable.Range(0, 2000).Select(i => { var r = second.New<IReuseRecord>(); r.Last = i; return r; }).ToArray();
        foreach (var old in stale)
        {
            Assert.Contains("'class first'", Assert.Throws<ObjectDisposedException>(() => old.Last).Message);
            Assert.Contains("'class first'", Assert.Throws<ObjectDisposedException>(() => second.Delete(old)).Message); // frees nothing of second's
        }
        for (int i = 0; i < live.Length; i++)
        {
            Assert.Equal(i, live[i].Last);
            second.Delete(live[i]);
        }
    }

    [Fact]
    public void Stale_handles_fail_after_their_empty_chunk_was_released_and_reused()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var stale = Enumerable.Range(0, 1500).Select(_ => ReuseRecordRef.New(heap)).ToArray();
        foreach (var r in stale) r.Delete(heap);
        // Empty chunks went back to the process-wide pool as their blocks came home; the News below take them again.
        var fresh = Enumerable.Range(0, 1500).Select(i => { var r = ReuseRecordRef.New(heap); r.First = i; return r; }).ToArray();
        foreach (var old in stale)
        {
            Assert.False(old.IsAllocated);
            Assert.Contains("after it was deleted", Assert.Throws<InvalidOperationException>(() => old.First).Message);
            Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => old.Delete(heap)).Message);
        }
        for (int i = 0; i < fresh.Length; i++)
        {
            Assert.Equal(i, fresh[i].First);
            fresh[i].Delete(heap);
        }
    }

    [Fact]
    public void Large_records_are_checked_the_same_way_across_Delete_Dispose_and_reuse()
    {
        var first = new TypeAllocator(new TypeAllocatorOptions { Name = "large first" });
        var deleted = LargeRef.New(first);
        var disposed = LargeRef.New(first);
        disposed.Far = 5;
        deleted.Delete(first);
        Assert.Contains("after it was deleted", Assert.Throws<InvalidOperationException>(() => deleted.Far).Message);
        first.Dispose();
        Assert.False(disposed.IsAllocated);
        Assert.Contains("'large first'", Assert.Throws<ObjectDisposedException>(() => disposed.Far).Message);

        using var second = new TypeAllocator();
        var reused = Enumerable.Range(0, 4).Select(_ => LargeRef.New(second)).ToArray(); // takes the pooled blocks back
        Assert.Contains(reused, r => AddressOf(r.AsUnchecked().Handle) == AddressOf(disposed.AsUnchecked().Handle) || AddressOf(r.AsUnchecked().Handle) == AddressOf(deleted.AsUnchecked().Handle));
        foreach (var r in reused) r.Near = 9;
        Assert.Throws<ObjectDisposedException>(() => disposed.Near = 1);
        Assert.Throws<InvalidOperationException>(() => deleted.Near = 1);
        Assert.All(reused, r => Assert.Equal((0L, 9), (r.Far, r.Near))); // zeroed when reused, and no stale write landed

        using var third = new TypeAllocator();
        Assert.Contains("another TypeAllocator", Assert.Throws<ArgumentException>(() => reused[0].Delete(third)).Message);
        foreach (var r in reused) r.Delete(second);
        Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => reused[1].Delete(second)).Message);
    }

    private static unsafe nuint AddressOf(UncheckedRecordRef handle) => (nuint)Unsafe.As<UncheckedRecordRef, nint>(ref handle);

    private static unsafe nuint AddressOf(ReuseRecordRef r)
    {
        var unchecked_ = r.AsUnchecked().Handle;
        return (nuint)Unsafe.As<UncheckedRecordRef, nint>(ref unchecked_);
    }
}

/// <summary>Tests that need a size class's pooled chunks to themselves run one at a time.</summary>
[CollectionDefinition(nameof(ChunkReuse), DisableParallelization = true)]
public sealed class ChunkReuse;
