namespace Manaloc.Memory;

/// <summary>What a <see cref="TypeAllocator"/> needs of its live record arrays, whatever their record type.</summary>
internal interface IRecordArray
{
    /// <summary>Nulls the address of every view, so the next access through one throws.</summary>
    void InvalidateViews();
}
