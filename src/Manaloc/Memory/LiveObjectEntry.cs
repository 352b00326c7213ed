namespace Manaloc.Memory;

/// <summary>Objects of one type still alive in a <see cref="TypeAllocator"/>.</summary>
/// <remarks>Immutable; safe to pass between threads.</remarks>
public sealed class LiveObjectEntry
{
    // Built by the allocator only (internal constructor and setters): a field added later is a new property, not a break.
    internal LiveObjectEntry()
    {
    }

    /// <summary>The interface (or <c>RecordArray&lt;IFoo&gt;</c> for record arrays).</summary>
    public string TypeName { get; internal init; } = "";

    /// <summary>Live objects.</summary>
    public long Count { get; internal init; }

    /// <summary>Native bytes they occupy, including size-class rounding.</summary>
    public long Bytes { get; internal init; }

    /// <summary>Allocation stacks of up to ten of them, when capture was on; empty otherwise.</summary>
    public IReadOnlyList<string> AllocationStacks { get; internal init; } = [];

    /// <summary>The type, the count and the bytes: <c>IFoo: 3 live, 96 bytes</c>.</summary>
    public override string ToString() => $"{TypeName}: {Count} live, {Bytes} bytes";
}
