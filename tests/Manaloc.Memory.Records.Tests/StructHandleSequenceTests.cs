using CsCheck;
using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// Random sequences over two TypeAllocators that are disposed and made again (so their memory is pooled and reused by
/// the other): New (through the allocator or a held heap, small and large records), set, get, copy, Delete through
/// either allocator or heap. Against a model: a live record always reads back what was last written to it (no stale
/// write ever lands), and a deleted or disposed one always throws, never reads.
/// </summary>
[Collection(nameof(ChunkReuse))]
public class StructHandleSequenceTests
{
    private enum Op { New, NewLarge, Set, Get, Copy, Delete, DeleteViaOther, Dispose }

    /// <summary>One record as the model knows it; copies of a handle share it.</summary>
    private sealed class Model(int owner, int incarnation)
    {
        public readonly int Owner = owner, Incarnation = incarnation;
        public bool Live = true;
        public long Value;
    }

    private static readonly Gen<(Op Op, int A, int I, long V, bool ViaHeap)> Step =
        Gen.Select(Gen.Frequency((6, Gen.Const(Op.New)), (1, Gen.Const(Op.NewLarge)), (5, Gen.Const(Op.Set)), (5, Gen.Const(Op.Get)), (2, Gen.Const(Op.Copy)),
                (4, Gen.Const(Op.Delete)), (1, Gen.Const(Op.DeleteViaOther)), (1, Gen.Const(Op.Dispose))),
            Gen.Int[0, 1], Gen.Int[0, 63], Gen.Long, Gen.Bool);

    [Fact]
    public void Live_records_read_back_their_values_and_dead_ones_always_throw()
        => Step.Array[1, 120].Sample(steps =>
        {
            var allocators = new[] { new TypeAllocator(), new TypeAllocator() };
            var incarnations = new int[2];
            var handles = new List<(FooDataRef Small, LargeRef Large, bool IsLarge, Model Model)>();
            try
            {
                foreach (var (op, a, i, v, viaHeap) in steps)
                {
                    var allocator = allocators[a];
                    switch (op)
                    {
                        case Op.New:
                            handles.Add((viaHeap ? FooDataRef.New(allocator.GetThreadHeap()) : FooDataRef.New(allocator), default, false, new Model(a, incarnations[a])));
                            break;
                        case Op.NewLarge:
                            handles.Add((default, LargeRef.New(allocator), true, new Model(a, incarnations[a])));
                            break;
                        case Op.Copy when handles.Count > 0:
                            handles.Add(handles[i % handles.Count]);
                            break;
                        case Op.Set when handles.Count > 0:
                        {
                            var h = handles[i % handles.Count];
                            if (h.Model.Live)
                            {
                                Write(h, v);
                                h.Model.Value = v;
                            }
                            else
                            {
                                Assert.ThrowsAny<InvalidOperationException>(() => Write(h, v));
                            }
                            break;
                        }
                        case Op.Get when handles.Count > 0:
                        {
                            var h = handles[i % handles.Count];
                            if (h.Model.Live) Assert.Equal(h.Model.Value, Read(h));
                            else Assert.ThrowsAny<InvalidOperationException>(() => Read(h));
                            Assert.Equal(h.Model.Live, h.IsLarge ? h.Large.IsAllocated : h.Small.IsAllocated);
                            break;
                        }
                        case Op.Delete or Op.DeleteViaOther when handles.Count > 0:
                        {
                            var h = handles[i % handles.Count];
                            int through = op == Op.Delete ? h.Model.Owner : 1 - h.Model.Owner;
                            bool ours = h.Model.Live && through == h.Model.Owner;
                            if (ours)
                            {
                                Delete(h, allocators[through], viaHeap);
                                h.Model.Live = false;
                            }
                            else if (h.Model.Live)
                            {
                                Assert.Throws<ArgumentException>(() => Delete(h, allocators[through], viaHeap)); // another allocator's live record
                            }
                            else
                            {
                                Assert.ThrowsAny<InvalidOperationException>(() => Delete(h, allocators[through], viaHeap));
                            }
                            break;
                        }
                        case Op.Dispose:
                            allocator.Dispose(); // its memory goes to the pool, for the other allocator and the next one here
                            foreach (var h in handles) if (h.Model.Owner == a && h.Model.Incarnation == incarnations[a]) h.Model.Live = false;
                            allocators[a] = new TypeAllocator();
                            incarnations[a]++;
                            break;
                    }
                }
                foreach (var h in handles) if (h.Model.Live) Assert.Equal(h.Model.Value, Read(h));
            }
            finally
            {
                foreach (var allocator in allocators) allocator.Dispose();
            }
        }, iter: 2000);

    private static void Write((FooDataRef Small, LargeRef Large, bool IsLarge, Model Model) h, long v)
    {
        if (h.IsLarge) h.Large.Far = v;
        else h.Small.Id = v;
    }

    private static long Read((FooDataRef Small, LargeRef Large, bool IsLarge, Model Model) h) => h.IsLarge ? h.Large.Far : h.Small.Id;

    private static void Delete((FooDataRef Small, LargeRef Large, bool IsLarge, Model Model) h, TypeAllocator through, bool viaHeap)
    {
        if (h.IsLarge) h.Large.Delete(through);
        else if (viaHeap) h.Small.Delete(through.GetThreadHeap());
        else h.Small.Delete(through);
    }
}
