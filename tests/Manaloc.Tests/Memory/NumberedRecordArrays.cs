using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>Record arrays whose contents say which array and which record a read came from.</summary>
internal static class NumberedRecordArrays
{
    /// <summary>An array of <paramref name="records"/> records whose record i holds <paramref name="offset"/> + i in <c>Bar</c>.</summary>
    public static RecordArray<IFooData> Create(TypeAllocator allocator, int records, int offset = 0)
    {
        var array = allocator.NewArray<IFooData>(records);
        for (int i = 0; i < records; i++) array.MoveTo(i).Bar = offset + i;
        return array;
    }
}
