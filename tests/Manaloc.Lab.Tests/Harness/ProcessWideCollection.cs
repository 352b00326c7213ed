namespace Manaloc.Lab.Tests.Harness;

/// <summary>
/// Tests that read process-wide counters (total allocated bytes, GC counts, lock contention) run
/// alone: another test class running at the same time would add to what they count.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ProcessWideCollection
{
    /// <summary>The collection's name.</summary>
    public const string Name = "process-wide counters";
}
