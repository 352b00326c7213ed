namespace Manaloc.Memory;

public sealed partial class TypeLayout
{
    /// <summary>
    /// The byte ranges a layout has placed fields in, as sorted, disjoint, merged [start, end) intervals, so
    /// the first fit walks the gaps (few: fields placed largest alignment first pack without gaps) instead
    /// of testing every placed field at every candidate offset, which made a 2000-property interface take
    /// seconds. Not thread-safe: one per layout computation.
    /// </summary>
    internal sealed class OccupiedRanges
    {
        private readonly List<(long Start, long End)> _ranges = [];

        /// <summary>Ranges visited by the first-fit searches on this thread so far: the layout's work, for tests of its growth.</summary>
        [ThreadStatic]
        internal static long t_visited;
        private long _emptyEnd; // where the last empty range was added: it occupies nothing but counts for End

        /// <summary>The end of the last range (0 when empty).</summary>
        public long End => Math.Max(_emptyEnd, _ranges.Count == 0 ? 0 : _ranges[^1].End);

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
                int mid = (lo + hi) >>> 1;
                if (_ranges[mid].End > offset) hi = mid;
                else lo = mid + 1;
            }
            return lo;
        }
    }
}
