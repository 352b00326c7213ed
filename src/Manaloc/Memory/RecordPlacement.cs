// Compiled twice: into Manaloc (TypeLayout, the run-time path) and, as a linked file, into Manaloc.Generators (the
// compile-time path), as System.Text.Json shares its Common sources with its generator. One placement algorithm, so a
// [NativeRecord] interface gets the same offsets from both. Hence netstandard2.0 C#: explicit usings, no index-from-end,
// no BCL API newer than netstandard2.0.
using System;
using System.Collections.Generic;
using System.Linq;

namespace Manaloc.Memory;

/// <summary>One field of a record as the placement reads it: a group of interface properties with the same name and type.</summary>
/// <param name="Name">The property name, qualified by its interface when two properties of different types share it.</param>
/// <param name="Size">Bytes the value occupies.</param>
/// <param name="Alignment">Natural alignment of the value.</param>
/// <param name="FixedOffset">The offset of its [RecordOffset], or null.</param>
/// <param name="OwnLine">It has [OwnCacheLine].</param>
/// <remarks>Equal by value, so the generator's pipeline models that hold it stay cacheable.</remarks>
internal readonly record struct LayoutField(string Name, int Size, int Alignment, int? FixedOffset, bool OwnLine);

/// <summary>Why a placement failed: the generator reports <see cref="BadOffset"/> as MNL011 and <see cref="TooLarge"/> as MNL012;
/// the run-time path throws the same reason in an ArgumentException.</summary>
internal enum PlacementError
{
    None,
    BadOffset,
    TooLarge,
}

/// <summary>The outcome of <see cref="RecordPlacement.Place"/>: each field's offset (in the order given) with the record's size
/// and alignment, or the field that cannot be placed and why.</summary>
/// <param name="Offsets">Offsets of the fields, index for index with the list placed (empty after an error).</param>
/// <param name="Size">Bytes of one record, a multiple of <paramref name="Alignment"/>.</param>
/// <param name="Alignment">Alignment of the record.</param>
/// <param name="Error">What went wrong, or <see cref="PlacementError.None"/>.</param>
/// <param name="Field">The index of the field the error names (-1 when placed).</param>
/// <param name="Reason">Why the field cannot be placed (null when placed).</param>
internal sealed record Placement(int[] Offsets, int Size, int Alignment, PlacementError Error, int Field, string? Reason)
{
    public static Placement Placed(int[] offsets, int size, int alignment) => new(offsets, size, alignment, PlacementError.None, -1, null);

    public static Placement Failed(PlacementError error, int field, string reason) => new(new int[0], 0, 0, error, field, reason);
}

/// <summary>
/// Places a record's fields: [RecordOffset] fields where they say; [OwnCacheLine] fields on a cache line each; the rest
/// largest alignment first (then largest size, stable) into the lowest free offset, which leaves no padding between them
/// (every .NET value type's size is a multiple of its alignment). The record's alignment is its largest field alignment (a
/// cache line with [CacheLineAligned] or an own-line field) and its size is rounded up to it, so records in an array stay aligned.
/// </summary>
/// <remarks>Offsets and ends are computed in long: a [RecordOffset] near int.MaxValue must be refused, not wrap. Pure and
/// thread-safe (each call has its own state).</remarks>
internal static class RecordPlacement
{
    /// <summary>Cache line size assumed by the layout attributes (64 bytes: x64 and most ARM64 cores).</summary>
    public const int CacheLineSize = 64;

    /// <summary>Largest record size in bytes (int.MaxValue rounded down to a cache line): sizes and offsets stay valid ints.</summary>
    public const int MaxRecordSize = int.MaxValue & ~(CacheLineSize - 1);

    /// <summary>The placement of <paramref name="fields"/>; <paramref name="cacheLineAligned"/>: the interface has [CacheLineAligned].</summary>
    public static Placement Place(IReadOnlyList<LayoutField> fields, bool cacheLineAligned)
    {
        bool alignRecord = cacheLineAligned;
        var occupied = new OccupiedRanges();
        var offsets = new int[fields.Count];
        var placed = new List<int>(fields.Count); // indices, in placement order

        // 1. Fixed offsets.
        for (int i = 0; i < fields.Count; i++)
        {
            var field = fields[i];
            if (field.FixedOffset is not { } at) continue;
            if (at < 0 || at % field.Alignment != 0)
            {
                return Placement.Failed(PlacementError.BadOffset, i, $"[RecordOffset({at})] is not a non-negative multiple of the type's natural alignment {field.Alignment}");
            }
            long end = (long)at + field.Size;
            if (end > MaxRecordSize) return TooLarge(i, $"[RecordOffset({at})] puts its end at byte {end}");
            if (occupied.Overlaps(at, end)) return Placement.Failed(PlacementError.BadOffset, i, $"[RecordOffset({at})] overlaps another property");
            offsets[i] = at;
            occupied.Add(at, end);
            placed.Add(i);
        }
        // 2. Own cache lines.
        for (int i = 0; i < fields.Count; i++)
        {
            var field = fields[i];
            if (field.FixedOffset is not null || !field.OwnLine) continue;
            long span = AlignUp(Math.Max(field.Size, 1), CacheLineSize);
            long at = occupied.FirstFit(span, CacheLineSize);
            if (at + span > MaxRecordSize) return TooLarge(i, $"its own cache line would end at byte {at + span}");
            offsets[i] = (int)at;
            occupied.Add(at, at + span);
            placed.Add(i);
            alignRecord = true;
        }
        // 3. The rest, largest alignment first, then largest size (OrderBy is stable), lowest free offset.
        var rest = Enumerable.Range(0, fields.Count).Where(i => fields[i].FixedOffset is null && !fields[i].OwnLine)
            .OrderByDescending(i => fields[i].Alignment).ThenByDescending(i => fields[i].Size);
        foreach (int i in rest)
        {
            var field = fields[i];
            long at = occupied.FirstFit(field.Size, field.Alignment);
            if (at + field.Size > MaxRecordSize) return TooLarge(i, $"placed after the other properties it would end at byte {at + field.Size}");
            offsets[i] = (int)at;
            occupied.Add(at, at + field.Size);
            placed.Add(i);
        }

        int alignment = 1;
        foreach (var field in fields) alignment = Math.Max(alignment, field.Alignment);
        if (alignRecord) alignment = Math.Max(alignment, CacheLineSize);
        long size = AlignUp(occupied.End, alignment);
        if (size > MaxRecordSize)
        {
            // The field that ends last (the first such in placement order) is the one the message names.
            int last = placed[0];
            foreach (int i in placed)
            {
                if ((long)offsets[i] + fields[i].Size > (long)offsets[last] + fields[last].Size) last = i;
            }
            return Placement.Failed(PlacementError.TooLarge, last, $"the record rounded up to its alignment {alignment} would be {size} bytes, more than the limit of {MaxRecordSize}");
        }
        return Placement.Placed(offsets, (int)size, alignment);
    }

    private static Placement TooLarge(int field, string what)
        => Placement.Failed(PlacementError.TooLarge, field, $"{what}, beyond the largest record size {MaxRecordSize}");

    public static long AlignUp(long value, int alignment) => (value + alignment - 1) / alignment * alignment;

    /// <summary>
    /// The byte ranges a layout has placed fields in, as sorted, disjoint, merged [start, end) intervals, so the first fit
    /// walks the gaps (few: fields placed largest alignment first pack without gaps) instead of testing every placed field
    /// at every candidate offset, which made a 2000-property interface take seconds. Not thread-safe: one per placement.
    /// </summary>
    internal sealed class OccupiedRanges
    {
        private readonly List<(long Start, long End)> _ranges = new();

        /// <summary>Ranges visited by the first-fit searches on this thread so far: the layout's work, for tests of its growth.</summary>
        [ThreadStatic]
        internal static long t_visited;
        private long _emptyEnd; // where the last empty range was added: it occupies nothing but counts for End

        /// <summary>The end of the last range (0 when empty).</summary>
        public long End => Math.Max(_emptyEnd, _ranges.Count == 0 ? 0 : _ranges[_ranges.Count - 1].End);

        /// <summary>True when [start, end) meets a placed range.</summary>
        public bool Overlaps(long start, long end)
        {
            int i = FirstEndingAfter(start);
            return i < _ranges.Count && _ranges[i].Start < end;
        }

        /// <summary>The lowest multiple of <paramref name="alignment"/> where <paramref name="size"/> bytes (at least 1) meet no placed range.</summary>
        public long FirstFit(long size, int alignment)
        {
            long length = Math.Max(size, 1);
            long at = 0;
            foreach (var (start, end) in _ranges)
            {
                t_visited++;
                if (end <= at) continue;
                if (at + length <= start) return at;
                at = AlignUp(end, alignment);
            }
            return at;
        }

        /// <summary>Adds [start, end), which meets no placed range, merging it with ranges it touches.</summary>
        public void Add(long start, long end)
        {
            if (start == end)
            {
                _emptyEnd = Math.Max(_emptyEnd, end);
                return;
            }
            int i = FirstEndingAfter(start - 1); // the first range that ends at or after start: it may touch on the left
            bool mergeLeft = i < _ranges.Count && _ranges[i].End == start;
            int right = mergeLeft ? i + 1 : i;
            bool mergeRight = right < _ranges.Count && _ranges[right].Start == end;
            if (mergeLeft && mergeRight)
            {
                _ranges[i] = (_ranges[i].Start, _ranges[right].End);
                _ranges.RemoveAt(right);
            }
            else if (mergeLeft)
            {
                _ranges[i] = (_ranges[i].Start, end);
            }
            else if (mergeRight)
            {
                _ranges[right] = (start, _ranges[right].End);
            }
            else
            {
                _ranges.Insert(right, (start, end));
            }
        }

        // Binary search: the index of the first range whose end is above offset (ranges are sorted and disjoint).
        private int FirstEndingAfter(long offset)
        {
            int lo = 0, hi = _ranges.Count;
            while (lo < hi)
            {
                int mid = lo + ((hi - lo) >> 1);
                if (_ranges[mid].End > offset) hi = mid;
                else lo = mid + 1;
            }
            return lo;
        }
    }
}
