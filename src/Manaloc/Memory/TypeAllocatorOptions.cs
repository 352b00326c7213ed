namespace Manaloc.Memory;

/// <summary>Settings of a <see cref="TypeAllocator"/>.</summary>
/// <remarks>Read once at construction; not thread-safe to mutate while being passed to a constructor.</remarks>
public sealed class TypeAllocatorOptions
{
    /// <summary>Name used in metrics tags, events and messages. Default "default".</summary>
    public string Name { get; set; } = "default";

    /// <summary>
    /// True (the default): every property access compares the record's generation stamp, so use after
    /// Delete or Dispose throws. False: accessors are bare loads and stores (faster; misuse is undefined
    /// behaviour). Delete is checked either way.
    /// </summary>
    public bool Checked { get; set; } = true;

    /// <summary>Capture the allocation stack of every object, shown in leak reports (slow: for diagnosis only).</summary>
    public bool CaptureAllocationStacks { get; set; }

    /// <summary>Called at Dispose with the objects still alive, when there are any (besides the Leak event).</summary>
    public Action<LiveObjectReport>? LeakReported { get; set; }
}
