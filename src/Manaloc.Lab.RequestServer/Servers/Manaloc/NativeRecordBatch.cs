using System.Diagnostics;
using Manaloc.Memory;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Manaloc;

/// <summary>A point of the record op, stored natively by the Manaloc build.</summary>
public interface IPointRecord
{
    /// <summary>i.</summary>
    long X { get; set; }
    /// <summary>i².</summary>
    long Y { get; set; }
    /// <summary>i / 2.</summary>
    double Weight { get; set; }
}

/// <summary>
/// The record op over native records: each thread that runs it (a dispatcher worker) owns one
/// <see cref="RecordArray{T}"/> and takes the first n records of it per request, so the records live in
/// native memory the GC never scans and a request allocates nothing managed.
/// </summary>
/// <remarks>
/// Why one array per thread rather than one per request: a <see cref="RecordArray{T}"/> is a managed object
/// with a view and a native block of its own (about 200 B of managed allocation, plus a system allocation);
/// per request that was most of what the Manaloc build allocated. The array is the thread's arena: a
/// request writes every field of the records it uses before reading them, so nothing from an earlier request
/// shows through. It grows (doubling, never past <see cref="RequestHandler.MaxRecords"/>) when a request asks
/// for more than it holds, so each thread holds at most MaxRecords records (1.5 MiB). Thread safety: the array
/// and its view are used only by the thread that owns them (<see cref="ThreadLocal{T}"/>).
/// </remarks>
internal sealed class NativeRecordBatch(TypeAllocator allocator) : IRecordBatch, IDisposable
{
    private const int InitialRecords = 1024;
    private readonly ThreadLocal<RecordArray<IPointRecord>?> _perThread = new(trackAllValues: true);

    public long FillAndSum(int count)
    {
        if (count is < 1 or > RequestHandler.MaxRecords)
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, $"The record count must be in 1..{RequestHandler.MaxRecords}.");
        }
        var records = RecordsFor(count);
        for (int i = 0; i < count; i++)
        {
            var p = records.MoveTo(i);
            p.X = i;
            p.Y = (long)i * i;
            p.Weight = i * 0.5;
        }
        long sum = 0;
        double weight = 0;
        for (int i = 0; i < count; i++)
        {
            var p = records.MoveTo(i);
            sum += p.X + p.Y;
            weight += p.Weight;
        }
        return sum + (long)weight;
    }

    /// <summary>This thread's array, grown to hold at least <paramref name="count"/> records.</summary>
    private RecordArray<IPointRecord> RecordsFor(int count)
    {
        var records = _perThread.Value;
        if (records is not null && records.Length >= count) return records;
        int length = records?.Length ?? InitialRecords;
        while (length < count) length *= 2;
        length = Math.Min(length, RequestHandler.MaxRecords);
        Debug.Assert(length >= count);
        records?.Dispose();
        records = allocator.NewArray<IPointRecord>(length);
        _perThread.Value = records;
        return records;
    }

    /// <summary>Frees every thread's array. Call once no thread runs the op any more.</summary>
    public void Dispose()
    {
        foreach (var records in _perThread.Values) records?.Dispose();
        _perThread.Dispose();
    }
}
