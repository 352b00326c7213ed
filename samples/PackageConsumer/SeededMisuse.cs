// Compiled only with -p:SeededMisuse=true (.ci/steps/60-package.sh): one misuse per MNL1xx rule, each of which the
// analyzers shipped in the package must report as a warning at this file. Never run.
using System.Buffers;
using Manaloc.Buffers;
using Manaloc.Memory;
using Manaloc.Pooling;
using Manaloc.Threading;

[NativeRecord]
public interface ISeededRecord
{
    int Value { get; set; }
}

public static class SeededMisuse
{
    public static int RentedNotReturned(Stream stream, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n); // MNL101: Read only borrows it, and nothing returns it
        return stream.Read(buffer, 0, n);
    }

    public static int UsedAfterReturn(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        ArrayPool<byte>.Shared.Return(buffer);
        return buffer[0]; // MNL102
    }

    public static void BufferNeverDisposed(BufferManager manager, int n)
    {
        RentedBuffer buffer = manager.RentBuffer(n); // MNL103
        buffer.Span.Clear();
    }

    public static void PooledObjectAfterReturn(IObjectPool<List<int>> pool)
    {
        List<int> list = pool.Rent();
        pool.Return(list);
        list.Add(1); // MNL104
    }

    public static void RecordAfterDelete(TypeAllocator allocator)
    {
        ISeededRecord record = allocator.New<ISeededRecord>();
        allocator.Delete(record);
        record.Value = 1; // MNL105
    }

    public static void ScopeDiscarded(SlimReaderWriterLock rw)
    {
        rw.EnterWriteScope(); // MNL106
    }

    public static async Task HeapAfterAwait(TypeAllocator allocator)
    {
        TypeAllocator.ThreadHeap heap = allocator.GetThreadHeap();
        await Task.Yield();
        Console.WriteLine(heap.ThreadId); // MNL107
    }

    public static int DefaultHandle(bool make, TypeAllocator allocator)
    {
        SeededRecordRef record = default;
        if (make) record = SeededRecordRef.New(allocator);
        return record.Value; // MNL108: default when make is false
    }

    public static void ViewKept(RecordArray<ISeededRecord> records, List<ISeededRecord> kept)
    {
        foreach (ISeededRecord record in records.Scan())
            kept.Add(record); // MNL109: every element is the one moving view
    }
}
