using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary><see cref="TypeAllocatorOptions.RecycleHandles"/>: reuse, zeroing, bounds, and the checks that remain.</summary>
public sealed class HandleRecyclingTests
{
    private static TypeAllocator Create() => new(new TypeAllocatorOptions { Checked = false, RecycleHandles = true, Name = "recycling" });

    [Fact]
    public void Recycling_with_checks_on_is_refused_with_a_reason()
    {
        var error = Assert.Throws<ArgumentException>(() => new TypeAllocator(new TypeAllocatorOptions { RecycleHandles = true }));
        Assert.Contains("Checked = false", error.Message);
    }

    [Fact]
    public void A_deleted_handle_is_handed_out_again_zeroed()
    {
        using var allocator = Create();
        var first = allocator.New<IFooData>();
        first.Bar = 7; first.Jar = -1; first.Car = 2.5; first.Tar = 9;
        allocator.Delete(first);
        Assert.False(((NativeRecord)(object)first).IsAllocated);

        var second = allocator.New<IFooData>();
        Assert.Same(first, second);
        Assert.True(((NativeRecord)(object)second).IsAllocated);
        Assert.Equal(0, second.Bar); Assert.Equal(0, second.Jar); Assert.Equal(0, second.Car); Assert.Equal(0, second.Tar);
        allocator.Delete(second);
    }

    [Fact]
    public void A_pair_allocates_nothing_on_the_managed_heap_once_warm()
    {
        using var allocator = Create();
        for (int i = 0; i < 1000; i++) allocator.Delete(allocator.New<IFooData>());
        long allocated = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < 10_000; i++)
            {
                var f = allocator.New<IFooData>();
                f.Bar = i;
                allocator.Delete(f);
            }
        });
        Assert.Equal(0, allocated);
    }

    [Fact]
    public void Delete_twice_before_reuse_still_throws()
    {
        using var allocator = Create();
        var f = allocator.New<IFooData>();
        allocator.Delete(f);
        Assert.Throws<InvalidOperationException>(() => allocator.Delete(f));
        // The failed Delete did not push the handle a second time: two News get two distinct handles.
        var a = allocator.New<IFooData>();
        var b = allocator.New<IFooData>();
        Assert.NotSame(a, b);
        allocator.Delete(a);
        allocator.Delete(b);
    }

    [Fact]
    public void Types_with_the_same_name_in_other_namespaces_keep_separate_handles()
    {
        using var allocator = Create();
        var a = allocator.New<Manaloc.Tests.Memory.RecyclingA.IDup>();
        var b = allocator.New<Manaloc.Tests.Memory.RecyclingB.IDup>();
        allocator.Delete(a);
        allocator.Delete(b); // b is on top of a shared stack, if there were one
        var a2 = allocator.New<Manaloc.Tests.Memory.RecyclingA.IDup>();
        Assert.Same(a, a2);
        Assert.IsAssignableFrom<Manaloc.Tests.Memory.RecyclingA.IDup>(a2);
        var b2 = allocator.New<Manaloc.Tests.Memory.RecyclingB.IDup>();
        Assert.Same(b, b2);
        a2.Value = 3;
        b2.Value = long.MaxValue;
        Assert.Equal(3, a2.Value);
        Assert.Equal(long.MaxValue, b2.Value);
        allocator.Delete(a2);
        allocator.Delete(b2);
    }

    [Fact]
    public void A_parked_handle_reports_itself_deleted_and_holds_no_pointer()
    {
        using var allocator = Create();
        var f = allocator.New<IFooData>();
        allocator.Delete(f);
        var record = (NativeRecord)(object)f;
        Assert.False(record.IsAllocated);
        Assert.Contains("not allocated", record.ToString());
        Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => allocator.Delete(f)).Message);
        Assert.Throws<NullReferenceException>(() => f.Bar); // unchecked: a stale use faults on null, not on the freed block
    }

    [Fact]
    public void Flushing_the_thread_cache_drops_the_parked_handles()
    {
        using var allocator = Create();
        var f = allocator.New<IFooData>();
        allocator.Delete(f);
        allocator.FlushThreadCache();
        Assert.NotSame(f, allocator.New<IFooData>());
    }

    [Fact]
    public void At_most_a_bounded_number_of_handles_is_kept_per_type_and_thread()
    {
        using var allocator = Create();
        var made = new IFooData[200];
        for (int i = 0; i < made.Length; i++) made[i] = allocator.New<IFooData>();
        foreach (var f in made) allocator.Delete(f);
        var again = new IFooData[200];
        for (int i = 0; i < again.Length; i++) again[i] = allocator.New<IFooData>();
        var set = new HashSet<IFooData>(made, ReferenceEqualityComparer.Instance);
        int reused = again.Count(set.Contains);
        Assert.InRange(reused, 1, 64);
        foreach (var f in again) allocator.Delete(f);
        Assert.Equal(0, allocator.CountLiveObjects());
    }

    [Fact]
    public void Handles_deleted_on_another_thread_serve_that_threads_news_and_nothing_leaks()
    {
        using var allocator = Create();
        var made = Enumerable.Range(0, 100).Select(_ => allocator.New<IFooData>()).ToArray();
        var reusedThere = 0;
        var other = new Thread(() =>
        {
            foreach (var f in made) allocator.Delete(f);
            var set = new HashSet<IFooData>(made, ReferenceEqualityComparer.Instance);
            var fresh = Enumerable.Range(0, 100).Select(_ => allocator.New<IFooData>()).ToArray();
            reusedThere = fresh.Count(set.Contains);
            foreach (var f in fresh) allocator.Delete(f);
        });
        other.Start();
        Assert.True(other.Join(TimeSpan.FromSeconds(30)), "the other thread did not finish");
        Assert.InRange(reusedThere, 1, 64);
        Assert.Equal(0, allocator.CountLiveObjects());
    }
}
