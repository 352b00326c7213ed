using CsCheck;
using Manaloc.Memory;

namespace Manaloc.Concurrency.Tests.Properties;

/// <summary>A record for the sequence tests (public: TypeAllocator implements public interfaces only).</summary>
public interface ISequenceRecord
{
    int A { get; set; }
    long B { get; set; }
}

/// <summary>
/// TypeAllocator and RecordArray from one thread, in checked mode: any sequence of New, Delete,
/// get, set, copy, NewArray, array access (through the moving view, and through saved items), array
/// Dispose and allocator Dispose either works (and reads back what was written) or throws one of the
/// library's documented exceptions, never anything else.
/// </summary>
public sealed class RecordSequenceTests
{
    private enum Op { New, Delete, Get, Set, Copy, NewArray, ArraySet, ArrayGet, ItemSave, ItemGet, ItemSet, ArrayDispose, DisposeAllocator }

    private static readonly Gen<(Op Op, int I, int J, int V)> Step =
        Gen.Select(Gen.Frequency((8, Gen.Int[0, 11].Select(i => (Op)i)), (1, Gen.Const(Op.ArrayDispose)), (1, Gen.Const(Op.DisposeAllocator))),
            Gen.Int[0, 15], Gen.Int[0, 15], Gen.Int);

    /// <summary>What a misuse may throw: the documented exceptions.</summary>
    private static bool Documented(Exception e) => e is ObjectDisposedException or InvalidOperationException or ArgumentException;

    [Fact]
    public void Every_sequence_works_or_throws_a_documented_exception()
        => Step.Array[1, 40].Sample(steps =>
        {
            var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = true });
            var records = new List<(ISequenceRecord Record, bool Live, int A)>();
            var arrays = new List<(RecordArray<ISequenceRecord> Array, bool Live, Dictionary<int, int> Values)>();
            var items = new List<(ISequenceRecord Item, int Array, int Index)>();
            bool disposed = false;
            try
            {
                foreach (var (op, i, j, v) in steps)
                {
                    try
                    {
                        Apply(allocator, records, arrays, items, ref disposed, op, i, j, v);
                    }
                    catch (Exception e) when (Documented(e))
                    {
                        // A misuse, reported as documented.
                    }
                }
            }
            finally
            {
                allocator.Dispose();
            }
        }, iter: PoolModelTests.Iterations * 10);

    private static void Apply(TypeAllocator allocator, List<(ISequenceRecord Record, bool Live, int A)> records,
        List<(RecordArray<ISequenceRecord> Array, bool Live, Dictionary<int, int> Values)> arrays,
        List<(ISequenceRecord Item, int Array, int Index)> items, ref bool disposed, Op op, int i, int j, int v)
    {
        switch (op)
        {
            case Op.New:
                var r = allocator.New<ISequenceRecord>();
                Assert.False(disposed, "New worked on a disposed allocator");
                Assert.Equal(0, r.A); // new records are zeroed
                records.Add((r, true, 0));
                break;
            case Op.Delete when records.Count > 0:
            {
                int k = i % records.Count;
                allocator.Delete(records[k].Record);
                Assert.True(records[k].Live && !disposed, "Delete of a deleted record (or after Dispose) did not throw");
                records[k] = (records[k].Record, false, 0);
                break;
            }
            case Op.Get when records.Count > 0:
            {
                int k = i % records.Count;
                int a = records[k].Record.A;
                Assert.True(records[k].Live && !disposed, "read a deleted record without an exception");
                Assert.Equal(records[k].A, a);
                break;
            }
            case Op.Set when records.Count > 0:
            {
                int k = i % records.Count;
                records[k].Record.A = v;
                Assert.True(records[k].Live && !disposed, "wrote a deleted record without an exception");
                records[k] = (records[k].Record, true, v);
                break;
            }
            case Op.Copy when records.Count > 0:
            {
                int from = i % records.Count, to = j % records.Count;
                records[to].Record.A = records[from].Record.A;
                Assert.True(records[from].Live && records[to].Live && !disposed, "copied between deleted records without an exception");
                records[to] = (records[to].Record, true, records[from].A);
                break;
            }
            case Op.NewArray:
                var array = allocator.NewArray<ISequenceRecord>(1 + i);
                Assert.False(disposed, "NewArray worked on a disposed allocator");
                arrays.Add((array, true, []));
                break;
            case Op.ArraySet when arrays.Count > 0:
            {
                var (arr, live, values) = arrays[j % arrays.Count];
                arr.MoveTo(i).A = v;
                Assert.True(live && !disposed && i < arr.Length, "wrote a disposed array (or out of range) without an exception");
                values[i] = v;
                break;
            }
            case Op.ArrayGet when arrays.Count > 0:
            {
                var (arr, live, values) = arrays[j % arrays.Count];
                int a = arr.MoveTo(i).A;
                Assert.True(live && !disposed && i < arr.Length, "read a disposed array (or out of range) without an exception");
                Assert.Equal(values.GetValueOrDefault(i), a);
                break;
            }
            case Op.ItemSave when arrays.Count > 0:
            {
                int k = j % arrays.Count;
                var (arr, live, values) = arrays[k];
                var item = arr[i];
                Assert.True(live && !disposed && i < arr.Length, "the indexer gave an item of a disposed array (or out of range)");
                Assert.Equal(values.GetValueOrDefault(i), item.A);
                items.Add((item, k, i));
                break;
            }
            case Op.ItemGet when items.Count > 0:
            {
                var (item, k, index) = items[i % items.Count];
                int a = item.A;
                Assert.True(arrays[k].Live && !disposed, "read a saved item of a disposed array without an exception");
                Assert.Equal(arrays[k].Values.GetValueOrDefault(index), a);
                break;
            }
            case Op.ItemSet when items.Count > 0:
            {
                var (item, k, index) = items[i % items.Count];
                item.A = v;
                Assert.True(arrays[k].Live && !disposed, "wrote a saved item of a disposed array without an exception");
                arrays[k].Values[index] = v;
                break;
            }
            case Op.ArrayDispose when arrays.Count > 0:
            {
                int k = j % arrays.Count;
                arrays[k].Array.Dispose();
                arrays[k] = (arrays[k].Array, false, arrays[k].Values);
                break;
            }
            case Op.DisposeAllocator:
                allocator.Dispose();
                disposed = true;
                break;
        }
    }
}
