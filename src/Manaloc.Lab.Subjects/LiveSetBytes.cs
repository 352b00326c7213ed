namespace Manaloc.Lab.Subjects;

/// <summary>Managed heap sizes around building a live set, each after a full blocking collection.</summary>
/// <param name="Baseline">Before anything was allocated.</param>
/// <param name="AfterContainer">After the container (array) was allocated.</param>
/// <param name="AfterRecords">After every record was created.</param>
/// <param name="Records">Records in the set.</param>
public readonly record struct LiveSetBytes(long Baseline, long AfterContainer, long AfterRecords, int Records)
{
    /// <summary>Managed bytes the whole set holds per record (never below zero: the heap may shrink by noise).</summary>
    public double PerRecord => Math.Max(0, (double)(AfterRecords - Baseline) / Records);
    /// <summary>Of which the container's.</summary>
    public double ContainerPerRecord => Math.Max(0, (double)(AfterContainer - Baseline) / Records);
    /// <summary>Of which the records' (handles, allocator bookkeeping, objects).</summary>
    public double RecordsPerRecord => Math.Max(0, (double)(AfterRecords - AfterContainer) / Records);

    /// <summary>Weighs the managed heap before, after the container and after the records of <paramref name="subject"/> (full blocking collections).</summary>
    /// <remarks>The lab's live-set child and the live-set benchmark's bytes column both weigh a set this way.</remarks>
    public static LiveSetBytes Measure(LiveSetSubject subject, int count)
    {
        ArgumentNullException.ThrowIfNull(subject);
        long baseline = GC.GetTotalMemory(forceFullCollection: true);
        subject.Allocate(count);
        long container = GC.GetTotalMemory(forceFullCollection: true);
        subject.Fill();
        long records = GC.GetTotalMemory(forceFullCollection: true);
        return new LiveSetBytes(baseline, container, records, count);
    }
}
