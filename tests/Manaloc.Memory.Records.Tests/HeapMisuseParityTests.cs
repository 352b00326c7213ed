using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// Every misuse of a generated handle gives the same exception through a held heap (<c>New(heap)</c>, <c>Delete(heap)</c>:
/// the typed, constant-folded path) as through the allocator (<c>New(allocator)</c>, <c>Delete(allocator)</c>), for a
/// small record, an empty one and one above the largest class, with and without stack capture.
/// </summary>
public class HeapMisuseParityTests
{
    public static TheoryData<string, bool> Cases() => new()
    {
        { "small", false }, { "small", true }, { "empty", false }, { "large", false }, { "large", true },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void Checked_handles_fail_the_same_way_through_a_heap_and_through_the_allocator(string record, bool captureStacks)
    {
        switch (record)
        {
            case "small": Compare(captureStacks, FooDataRef.New, FooDataRef.New, (h, x) => h.Delete(x), (h, x) => h.Delete(x), h => h.Count); break;
            case "empty": Compare(captureStacks, EmptyRecordRef.New, EmptyRecordRef.New, (h, x) => h.Delete(x), (h, x) => h.Delete(x), h => h.IsAllocated ? 1 : throw new InvalidOperationException("deleted")); break;
            default: Compare(captureStacks, LargeRef.New, LargeRef.New, (h, x) => h.Delete(x), (h, x) => h.Delete(x), h => h.Far); break;
        }
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void Unchecked_handles_fail_the_same_way_through_a_heap_and_through_the_allocator(string record, bool captureStacks)
    {
        // No use after Delete here: unchecked reads are not checked (documented).
        switch (record)
        {
            case "small": Compare(captureStacks, FooDataUncheckedRef.New, FooDataUncheckedRef.New, (h, x) => h.Delete(x), (h, x) => h.Delete(x), null); break;
            case "empty": Compare(captureStacks, EmptyRecordUncheckedRef.New, EmptyRecordUncheckedRef.New, (h, x) => h.Delete(x), (h, x) => h.Delete(x), null); break;
            default: Compare(captureStacks, LargeUncheckedRef.New, LargeUncheckedRef.New, (h, x) => h.Delete(x), (h, x) => h.Delete(x), null); break;
        }
    }

    private static void Compare<THandle>(bool captureStacks,
        Func<TypeAllocator.ThreadHeap, THandle> newOnHeap, Func<TypeAllocator, THandle> newOnAllocator,
        Action<THandle, TypeAllocator.ThreadHeap> deleteOnHeap, Action<THandle, TypeAllocator> deleteOnAllocator,
        Func<THandle, long>? read) where THandle : struct
    {
        var viaHeap = Run<THandle>(captureStacks, newOnHeap, (h, a, heap) => deleteOnHeap(h, heap), read, heapNew: true);
        var viaAllocator = Run<THandle>(captureStacks, newOnAllocator, (h, a, heap) => deleteOnAllocator(h, a), read, heapNew: false);
        Assert.Equal(viaAllocator, viaHeap);
        Assert.Equal(["delete: ok", "delete again: InvalidOperationException"], viaHeap.Take(2));
        Assert.Contains("delete default: ArgumentException", viaHeap);
        Assert.Contains("new after dispose: ObjectDisposedException", viaHeap);
        Assert.Equal("delete after dispose: ObjectDisposedException", viaHeap[^1]);
    }

    /// <summary>Each misuse, and the exception type it gave (or "ok").</summary>
    private static List<string> Run<THandle>(bool captureStacks, Delegate make, Action<THandle, TypeAllocator, TypeAllocator.ThreadHeap> delete,
        Func<THandle, long>? read, bool heapNew) where THandle : struct
    {
        var options = new TypeAllocatorOptions { CaptureAllocationStacks = captureStacks, LeakReported = null };
        var outcomes = new List<string>();
        THandle New(TypeAllocator a, TypeAllocator.ThreadHeap heap)
            => heapNew ? ((Func<TypeAllocator.ThreadHeap, THandle>)make)(heap) : ((Func<TypeAllocator, THandle>)make)(a);
        void Try(string what, Action action)
        {
            try
            {
                action();
                outcomes.Add(what + ": ok");
            }
            catch (Exception e)
            {
                outcomes.Add(what + ": " + e.GetType().Name);
            }
        }

        using (var allocator = new TypeAllocator(options))
        using (var other = new TypeAllocator(options))
        {
            var heap = allocator.GetThreadHeap();
            var otherHeap = other.GetThreadHeap();
            var once = New(allocator, heap);
            Try("delete", () => delete(once, allocator, heap));
            Try("delete again", () => delete(once, allocator, heap));
            if (read is not null) Try("read after delete", () => read(once));
            Try("delete default", () => delete(default, allocator, heap));
            var foreign = New(other, otherHeap);
            if (read is not null) Try("delete another allocator's", () => delete(foreign, allocator, heap)); // checked only: unchecked is undefined
            Try("delete it through its own", () => delete(foreign, other, otherHeap));
            Assert.Equal(0, allocator.CountLiveObjects());
            Assert.Equal(0, other.CountLiveObjects());
            var kept = New(allocator, heap);
            allocator.Dispose();
            Try("new after dispose", () => New(allocator, heap));
            if (read is not null) Try("read after dispose", () => read(kept));
            Try("delete after dispose", () => delete(kept, allocator, heap));
            // The other allocator is untouched by this one's misuse and Dispose: its record was freed through it, so its
            // counters balance (a Delete that went astray, or a Dispose that reached it, would leave a block live or gone twice).
            Assert.Equal(0, other.GetSlabStatistics().LiveBlocks);
        }
        return outcomes;
    }
}
