using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class LeakReportNameTests
{
    [Fact]
    public void Two_types_with_one_simple_name_in_two_namespaces_get_two_entries_named_with_their_namespaces()
    {
        LiveObjectReport? leaks = null;
        var allocator = new TypeAllocator(new TypeAllocatorOptions { LeakReported = r => leaks = r });
        allocator.New<RecyclingA.IDup>();
        allocator.New<RecyclingA.IDup>();
        allocator.New<RecyclingB.IDup>();
        allocator.New<IFooData>();
        var report = allocator.GetLiveObjects();
        Assert.Equal(2, report.Entries.Single(e => e.TypeName == "Manaloc.Tests.Memory.RecyclingA.IDup").Count);
        Assert.Equal(1, report.Entries.Single(e => e.TypeName == "Manaloc.Tests.Memory.RecyclingB.IDup").Count);
        Assert.Equal(1, report.Entries.Single(e => e.TypeName == nameof(IFooData)).Count); // unique names stay short
        allocator.Dispose();
        Assert.NotNull(leaks);
        Assert.Equal(3, leaks.Entries.Count);
        Assert.Equal(4, leaks.TotalCount);
    }
}
