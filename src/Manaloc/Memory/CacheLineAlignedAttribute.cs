namespace Manaloc.Memory;

/// <summary>Aligns every record of the interface to a cache line and rounds its size up to whole lines.</summary>
/// <remarks>
/// Why: two records written by different threads then never share a line (no false sharing between
/// neighbours), and a record that fits in one line is read with one miss. The line size is
/// <see cref="TypeLayout.CacheLineSize"/>. Thread safety: attributes are immutable.
/// </remarks>
[AttributeUsage(AttributeTargets.Interface, Inherited = false)]
public sealed class CacheLineAlignedAttribute : Attribute
{
}
