namespace Manaloc.Memory;

/// <summary>Puts a property alone on its own cache line of its <see cref="TypeAllocator"/> record, and aligns the record to a cache line.</summary>
/// <remarks>
/// Why: a field
/// that one thread writes often slows every other thread that touches any field of the same cache line
/// (false sharing). Padding the contended field to a line of its own trades memory for scalability.
/// The line size is <see cref="TypeLayout.CacheLineSize"/>. Thread safety: attributes are immutable.
/// </remarks>
[AttributeUsage(AttributeTargets.Property, Inherited = false)]
public sealed class OwnCacheLineAttribute : Attribute
{
}
