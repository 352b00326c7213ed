using System.Diagnostics.Tracing;
using Manaloc.Diagnostics;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>Round trips, zeroing, misuse, leak reports; run checked and unchecked.</summary>
public abstract class TypeAllocatorContractTests
{
    protected abstract bool Checked { get; }

    protected TypeAllocator Create(bool stacks = false, Action<LiveObjectReport>? leaks = null)
        => new(new TypeAllocatorOptions { Checked = Checked, CaptureAllocationStacks = stacks, LeakReported = leaks, Name = "test" });

    [Fact]
    public void Every_property_type_round_trips_and_starts_zeroed()
    {
        using var allocator = Create();
        var a = allocator.New<IAllTypes>();
        Assert.Equal(default, a.I128);
        Assert.Equal(default, a.Money);
        Assert.False(a.Flag);
        Assert.Equal(default, a.Mix.Value);
        Assert.Null(a.MaybeInt);

        var guid = Guid.NewGuid();
        var now = new DateTime(2026, 11, 22, 3, 4, 5, DateTimeKind.Utc);
        var nowOffset = new DateTimeOffset(2011, 8, 12, 10, 0, 0, TimeSpan.FromHours(3));
        a.U8 = 250; a.I8 = -100; a.I16 = -30000; a.U16 = 65000; a.I32 = int.MinValue; a.U32 = uint.MaxValue;
        a.I64 = long.MinValue; a.U64 = ulong.MaxValue; a.F32 = 1.5f; a.F64 = Math.PI; a.F16 = (Half)2.5;
        a.I128 = Int128.MinValue; a.U128 = UInt128.MaxValue; a.Flag = true; a.Letter = 'é'; a.NInt = -5; a.NUInt = 5;
        a.Money = 79228162514264337593543950335m; a.Id = guid; a.When = now; a.WhenOffset = nowOffset; a.Duration = TimeSpan.FromTicks(-7);
        a.E8 = ByteEnum.B; a.E16 = ShortEnum.A; a.E32 = IntEnum.B; a.E64 = LongEnum.B; a.EU64 = ULongEnum.B;
        a.Point = new Point3 { X = 1, Y = -2, Z = 3 };
        a.Mix = new Mixed { Tag = 9, Value = -1, Position = new Point3 { X = 4, Y = 5, Z = 6 } };
        a.MaybeInt = 42;

        Assert.Equal(250, a.U8); Assert.Equal(-100, a.I8); Assert.Equal(-30000, a.I16); Assert.Equal(65000, a.U16);
        Assert.Equal(int.MinValue, a.I32); Assert.Equal(uint.MaxValue, a.U32); Assert.Equal(long.MinValue, a.I64);
        Assert.Equal(ulong.MaxValue, a.U64); Assert.Equal(1.5f, a.F32); Assert.Equal(Math.PI, a.F64); Assert.Equal((Half)2.5, a.F16);
        Assert.Equal(Int128.MinValue, a.I128); Assert.Equal(UInt128.MaxValue, a.U128); Assert.True(a.Flag); Assert.Equal('é', a.Letter);
        Assert.Equal(-5, a.NInt); Assert.Equal(5u, a.NUInt); Assert.Equal(79228162514264337593543950335m, a.Money); Assert.Equal(guid, a.Id);
        Assert.Equal(now, a.When); Assert.Equal(DateTimeKind.Utc, a.When.Kind); Assert.Equal(nowOffset, a.WhenOffset); Assert.Equal(nowOffset.Offset, a.WhenOffset.Offset);
        Assert.Equal(TimeSpan.FromTicks(-7), a.Duration); Assert.Equal(ByteEnum.B, a.E8); Assert.Equal(ShortEnum.A, a.E16);
        Assert.Equal(IntEnum.B, a.E32); Assert.Equal(LongEnum.B, a.E64); Assert.Equal(ULongEnum.B, a.EU64);
        Assert.Equal(new Point3 { X = 1, Y = -2, Z = 3 }, a.Point);
        Assert.Equal(9, a.Mix.Tag); Assert.Equal(-1, a.Mix.Value); Assert.Equal(6, a.Mix.Position.Z);
        Assert.Equal(42, a.MaybeInt);
        allocator.Delete(a);
    }

    [Fact]
    public void Get_only_set_only_and_shared_declarations_use_one_field()
    {
        using var allocator = Create();
        var rw = allocator.New<IReadWriteX>();
        ((IWriteX)rw).X = 17;
        Assert.Equal(17, ((IReadX)rw).X);
        rw.X = 18;
        Assert.Equal(18, ((IReadX)rw).X);

        var d = allocator.New<IDiamond>();
        ((IBaseA)d).Count = 5;
        Assert.Equal(5, ((IBaseB)d).Count);
        ((IBaseA)d).Size = long.MaxValue;
        ((IBaseB)d).Size = -1;
        Assert.Equal(long.MaxValue, ((IBaseA)d).Size);
        Assert.Equal(-1, ((IBaseB)d).Size);
        d.Extra = 0.25;
        Assert.Equal(0.25, d.Extra);

        var nested = allocator.New<Outer.INested>();
        nested.Value = 3;
        Assert.Equal(3, nested.Value);
        var box = allocator.New<IBox<decimal>>();
        box.Value = 1.1m;
        Assert.Equal(1.1m, box.Value);
        var empty = allocator.New<IEmpty>();
        Assert.True(((NativeRecord)empty).IsAllocated);
        Assert.Equal(5, allocator.CountLiveObjects());
    }

    [Fact]
    public void Records_are_aligned_and_distinct_and_large_records_work()
    {
        using var allocator = Create();
        var hot = allocator.New<IHotCold>();
        var big = allocator.New<ILarge>();
        var huge = new Huge { A = 1, P = 2 };
        big.H5 = huge;
        big.Last = 7;
        hot.Hot = 1;
        Assert.Equal(2, big.H5.P);
        Assert.Equal(7, big.Last);
        unsafe
        {
            Assert.Equal(0u, (uint)((nuint)((NativeRecord)hot).Address % 64));
        }
        var records = Enumerable.Range(0, 1000).Select(i => { var f = allocator.New<IFooData>(); f.Bar = i; f.Jar = -i; return f; }).ToArray();
        for (int i = 0; i < records.Length; i++)
        {
            Assert.Equal(i, records[i].Bar);
            Assert.Equal(-i, records[i].Jar);
        }
        foreach (var r in records) allocator.Delete(r);
        allocator.Delete(big);
        allocator.Delete(hot);
        Assert.Equal(0, allocator.CountLiveObjects());
    }

    [Fact]
    public void Reused_memory_is_zeroed_again()
    {
        using var allocator = Create();
        for (int i = 0; i < 200; i++)
        {
            var f = allocator.New<IFooData>();
            Assert.Equal(0, f.Bar);
            Assert.Equal(0L, f.Jar);
            f.Bar = 99; f.Jar = 99; f.Car = 99; f.Tar = 99;
            allocator.Delete(f);
        }
    }

    [Fact]
    public void Double_delete_throws_and_leaves_the_allocator_consistent()
    {
        using var allocator = Create();
        var f = allocator.New<IFooData>();
        allocator.Delete(f);
        var e = Assert.Throws<InvalidOperationException>(() => allocator.Delete(f));
        Assert.Contains("already deleted", e.Message, StringComparison.Ordinal);
        var g = allocator.New<IFooData>();
        var h = allocator.New<IFooData>();
        Assert.NotSame(g, h);
        g.Bar = 1; h.Bar = 2;
        Assert.Equal(1, g.Bar);
        Assert.Equal(2, h.Bar);
    }

    [Fact]
    public void Delete_of_foreign_or_unknown_objects_throws()
    {
        using var a = Create();
        using var b = Create();
        var f = a.New<IFooData>();
        Assert.Contains("another TypeAllocator", Assert.Throws<ArgumentException>(() => b.Delete(f)).Message, StringComparison.Ordinal);
        Assert.Contains("not created by a TypeAllocator", Assert.Throws<ArgumentException>(() => a.Delete<IFooData>(new ManagedFoo())).Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentNullException>(() => a.Delete<IFooData>(null!));
        f.Bar = 5;
        Assert.Equal(5, f.Bar);
        a.Delete(f);
    }

    [Fact]
    public void Use_after_dispose_throws_ObjectDisposedException_and_handles_say_not_allocated()
    {
        var allocator = Create();
        var f = allocator.New<IFooData>();
        var record = (NativeRecord)(object)f;
        Assert.True(record.IsAllocated);
        allocator.Dispose();
        Assert.False(record.IsAllocated);
        Assert.Throws<ObjectDisposedException>(() => allocator.New<IFooData>());
        Assert.Throws<ObjectDisposedException>(() => allocator.Delete(f));
        if (Checked)
        {
            Assert.Throws<ObjectDisposedException>(() => f.Bar);
            Assert.Throws<ObjectDisposedException>(() => f.Bar = 1);
        }
        allocator.Dispose(); // idempotent
    }

    [Fact]
    public void Leaks_are_reported_by_type_with_stacks_on_request()
    {
        LiveObjectReport? reported = null;
        var allocator = Create(stacks: true, leaks: r => reported = r);
        var keep = new List<object>();
        for (int i = 0; i < 3; i++) keep.Add(allocator.New<IFooData>());
        keep.Add(allocator.New<IBig>());
        var deleted = allocator.New<IFooData>();
        allocator.Delete(deleted);
        using var array = allocator.NewArray<IFooData>(10);

        var report = allocator.GetLiveObjects();
        Assert.Equal(3, report.Entries.Single(e => e.TypeName == nameof(IFooData)).Count);
        Assert.Equal(1, report.Entries.Single(e => e.TypeName == nameof(IBig)).Count);
        Assert.Equal(1, report.Entries.Single(e => e.TypeName == "RecordArray<IFooData>").Count);
        Assert.Contains(nameof(Leaks_are_reported_by_type_with_stacks_on_request), report.Entries.Single(e => e.TypeName == nameof(IFooData)).AllocationStacks[0], StringComparison.Ordinal);

        using var listener = new LeakListener();
        allocator.Dispose();
        Assert.NotNull(reported);
        Assert.Equal(5, reported!.TotalCount);
        Assert.Contains(listener.Leaks, l => l == (nameof(IFooData), 3L));
        GC.KeepAlive(keep);
    }

    [Fact]
    public void Invalid_types_fail_at_New_and_PreGenerate()
    {
        using var allocator = Create();
        Assert.Contains("DoIt", Assert.Throws<ArgumentException>(() => allocator.New<IWithMethod>()).Message, StringComparison.Ordinal);
        Assert.Contains("not public", Assert.Throws<ArgumentException>(() => allocator.PreGenerate(typeof(IInternal))).Message, StringComparison.Ordinal);
        Assert.Contains("class", Assert.Throws<ArgumentException>(() => allocator.New<NotAnInterface>()).Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentNullException>(() => allocator.PreGenerate(null!));
    }

    [Fact]
    public void Handles_convert_to_nothing_implicitly()
    {
        var ops = typeof(NativeRecord).GetMethods().Concat(typeof(NativeBlock).GetMethods()).Concat(typeof(RecordArray<IFooData>).GetMethods())
            .Where(m => m.Name is "op_Implicit" or "op_Explicit" or "op_True" or "op_False");
        Assert.Empty(ops);
    }

    private sealed class ManagedFoo : IFooData
    {
        public int Bar { get; set; }
        public long Jar { get; set; }
        public double Car { get; set; }
        public byte Tar { get; set; }
    }

    private sealed class LeakListener : EventListener
    {
        public List<(string, long)> Leaks { get; } = [];

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Manaloc") EnableEvents(eventSource, EventLevel.Verbose);
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventId == 1 && e.Payload is { Count: 3 } p)
            {
                lock (Leaks) Leaks.Add(((string)p[0]!, (long)p[1]!));
            }
        }
    }
}

public sealed class CheckedTypeAllocatorTests : TypeAllocatorContractTests
{
    protected override bool Checked => true;

    [Fact]
    public void Large_records_throw_after_delete_and_after_dispose()
    {
        var allocator = Create();
        Assert.True(TypeLayout.Of<IVeryLarge>().Size > NativeSlabAllocator.LargestClassSize, "a block of its own, not a class block");
        var deleted = allocator.New<IVeryLarge>();
        var live = allocator.New<IVeryLarge>();
        live.Last = 3;
        allocator.Delete(deleted);
        Assert.Throws<InvalidOperationException>(() => deleted.Last);
        Assert.Equal(3, live.Last);
        allocator.Dispose();
        Assert.Throws<ObjectDisposedException>(() => live.Last);
        Assert.Throws<ObjectDisposedException>(() => live.Last = 4);
    }

    [Fact]
    public unsafe void A_stale_delete_is_refused_even_when_the_slot_stamp_has_wrapped_round_to_its_generation()
    {
        // Found in review: after 2^31 reuses of a slot a stale handle's generation can match the stamp again; its
        // Delete then released the live object's slot and untracked it. The null address refuses it.
        using var allocator = Create();
        var old = allocator.New<IFooData>();
        var oldRecord = (NativeRecord)(object)old;
        uint generation = oldRecord.Generation;
        uint* stamp = oldRecord.StampAddress;
        allocator.Delete(old);
        *stamp = generation - 1; // as after 2^31 - 1 more New/Delete pairs on this slot
        var live = allocator.New<IFooData>();
        var liveRecord = (NativeRecord)(object)live;
        Assert.Equal(generation, liveRecord.Generation); // the stale handle's generation matches the stamp

        Assert.Throws<InvalidOperationException>(() => allocator.Delete(old));

        Assert.True(liveRecord.IsAllocated);
        live.Bar = 7;
        Assert.Equal(7, live.Bar);
        Assert.Equal(1, allocator.CountLiveObjects());
        allocator.Delete(live);
        Assert.Throws<InvalidOperationException>(() => live.Bar);
    }

    [Fact]
    public void Deleted_handles_are_not_kept_alive_by_the_allocator()
    {
        using var allocator = Create();
        var weak = NewAndDelete(allocator);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.False(weak.TryGetTarget(out _), "the allocator still references a deleted handle");

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static WeakReference<IFooData> NewAndDelete(TypeAllocator allocator)
        {
            var f = allocator.New<IFooData>();
            allocator.Delete(f);
            return new WeakReference<IFooData>(f);
        }
    }

    [Fact]
    public void Use_after_delete_throws_also_after_the_slot_was_reused()
    {
        using var allocator = Create();
        var old = allocator.New<IFooData>();
        nint oldAddress;
        unsafe { oldAddress = (nint)((NativeRecord)(object)old).Address; }
        allocator.Delete(old);
        Assert.False(((NativeRecord)(object)old).IsAllocated);
        Assert.Contains("used after it was deleted", Assert.Throws<InvalidOperationException>(() => old.Bar).Message, StringComparison.Ordinal);
        var reused = allocator.New<IFooData>();
        unsafe
        {
            Assert.True((nint)((NativeRecord)(object)reused).Address == oldAddress, "the slot was reused");
        }
        reused.Bar = 7;
        Assert.Throws<InvalidOperationException>(() => old.Bar = 8);
        Assert.Throws<InvalidOperationException>(() => allocator.Delete(old));
        Assert.Equal(7, reused.Bar);
        Assert.True(((NativeRecord)(object)reused).IsAllocated);
    }
}

public sealed class UncheckedTypeAllocatorTests : TypeAllocatorContractTests
{
    protected override bool Checked => false;
}
