using Manaloc.Lab.Subjects;
using Manaloc.Memory;

namespace Manaloc.Lab.Experiments;

public sealed partial class TypedMemory
{
    /// <summary>
    /// The struct handles' live set beside the class set's: managed bytes per record (the handle array only:
    /// 16 bytes a record, no object per record) and the full gen-2 pause with the records alive. The
    /// headline's figure: the path a user picks for a large live set.
    /// </summary>
    private static void MeasureStructLive(ExperimentContext context, TypeAllocator typed, int count)
    {
        Settle();
        var heap = typed.GetThreadHeap();
        long before = GC.GetTotalMemory(forceFullCollection: true);
        var items = new FooDataRef[count];
        for (int i = 0; i < count; i++)
        {
            var f = FooDataRef.New(heap);
            f.Bar = i;
            items[i] = f;
        }
        long managed = GC.GetTotalMemory(forceFullCollection: true) - before;
        var records = Parameters.Of(("records", count));
        context.RecordSamples(StructChecked, "B/record", [Math.Max(0, (double)managed / count)], With(records, "heap"));
        context.RecordSamples(StructChecked, "ms", FullGcPauses(context), With(records, "full-gc"));
        foreach (var f in items) f.Delete(heap);
        GC.KeepAlive(items);
    }
}
