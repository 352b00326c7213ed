namespace Manaloc.Memory;

/// <summary>Settings of a <see cref="TypeAllocator"/>.</summary>
/// <remarks>Read once at construction; not thread-safe to mutate while being passed to a constructor.</remarks>
public sealed class TypeAllocatorOptions
{
    /// <summary>Name used in metrics tags, events and messages. Default "default".</summary>
    public string Name { get; set; } = "default";

    /// <summary>
    /// True (the default): every property access through a handle from New tests the handle's address, which
    /// Delete and the allocator's Dispose null (a record array's views test an address the array nulls at Dispose,
    /// and its moves compare the stamp), so use after Delete or Dispose throws. False: accessors are bare loads and
    /// stores (faster; misuse is undefined behaviour). Delete is checked either way (the slot's generation stamp).
    /// </summary>
    public bool Checked { get; set; } = true;

    /// <summary>
    /// True: Delete keeps the handle (up to 64 per type and thread) and the next New of that type on the
    /// same thread hands it out again, so a New+Delete pair allocates nothing on the managed heap.
    /// Requires <see cref="Checked"/> = false: a reference kept after Delete would then refer to a later
    /// object, which no check can tell apart. Two Deletes of one handle racing on two threads are undefined with
    /// recycling (the winner may already have handed the handle out again). Default false.
    /// </summary>
    public bool RecycleHandles { get; set; }

    /// <summary>Capture the allocation stack of every object, shown in leak reports (slow: for diagnosis only).</summary>
    public bool CaptureAllocationStacks { get; set; }

    /// <summary>Called at Dispose with the objects still alive, when there are any (besides the Leak event).</summary>
    public Action<LiveObjectReport>? LeakReported { get; set; }
}
