namespace Manaloc.Memory;

/// <summary>Per-T fast path to the cached implementation: one static field read after the first use.</summary>
internal static class RecordTypeCache<T> where T : class
{
    public static RecordType? Checked;
    public static RecordType? Unchecked;
    public static RecordType? CheckedView;
    public static RecordType? UncheckedView;
    public static RecordType? CheckedItem;
}
