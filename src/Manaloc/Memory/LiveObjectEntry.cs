namespace Manaloc.Memory;

/// <summary>Objects of one type still alive in a <see cref="TypeAllocator"/>.</summary>
/// <param name="TypeName">The interface (or <c>RecordArray&lt;IFoo&gt;</c> for record arrays).</param>
/// <param name="Count">Live objects.</param>
/// <param name="Bytes">Native bytes they occupy, including size-class rounding.</param>
/// <param name="AllocationStacks">Allocation stacks of up to ten of them, when capture was on.</param>
public sealed record LiveObjectEntry(string TypeName, long Count, long Bytes, IReadOnlyList<string> AllocationStacks);
