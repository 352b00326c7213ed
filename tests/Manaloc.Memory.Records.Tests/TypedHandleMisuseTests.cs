using System.Runtime.CompilerServices;
using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// Misuses of the typed handles and the held heap's typed New and Delete that the 16-byte path refuses: a typed
/// handle over a type argument nobody registered, the statistics of a New refused by the thread check, the module
/// initializer's order.
/// </summary>
public class TypedHandleMisuseTests
{
    [Fact]
    public void A_typed_handle_over_an_unregistered_type_argument_is_refused_rather_than_checking_the_records_first_word()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var old = FooDataRef.New(heap);
        RecordRef stale = old.Handle;
        uint oldGeneration = Unsafe.As<RecordRef, RecordRefLayout>(ref stale).Generation;
        old.Delete(heap);
        var reborn = FooDataRef.New(heap); // the same block (the bin is last in, first out), the next generation
        Assert.Equal(Unsafe.As<RecordRef, RecordRefLayout>(ref stale).Address, ReadAddress(reborn.Handle));
        reborn.Handle.FieldAt<uint>(0) = oldGeneration; // the new record's first word happens to equal the old generation
        Assert.Throws<InvalidOperationException>(() => stale.FieldAt<long>(8)); // the untyped path refuses the stale handle

        // A type argument with no registration has stamp offset 0; From must not take any handle for it, or the checked
        // accessor would compare the generation with the record's first word and read and write the new record.
        Assert.Contains(nameof(UnregisteredFactory), Assert.Throws<InvalidOperationException>(() => RecordRef<UnregisteredFactory>.From(stale)).Message);
        Assert.Throws<InvalidOperationException>(() => UncheckedRecordRef<UnregisteredFactory>.From(stale.AsUnchecked()));
        Assert.Equal(default, RecordRef<UnregisteredFactory>.From(default)); // default stays default
        Assert.Equal(default, UncheckedRecordRef<UnregisteredFactory>.From(default));
        reborn.Delete(heap);
    }

    [Fact]
    public void A_New_refused_by_the_thread_check_is_not_counted_as_an_allocation()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var before = allocator.GetSlabStatistics();
        var made = new List<FooDataUncheckedRef>();
        Exception? error = null;
        var thread = new Thread(() =>
        {
            try
            {
                for (int i = 0; i < 2; i++) made.Add(FooDataUncheckedRef.New(heap));
            }
            catch (InvalidOperationException e)
            {
                error = e;
            }
        });
        thread.Start();
        thread.Join(); // this thread waits meanwhile: the misuse does not race the owner here
        Assert.Contains("belongs to managed thread", Assert.IsType<InvalidOperationException>(error).Message);
        Assert.Empty(made); // refused on the first New
        var mid = allocator.GetSlabStatistics();
        Assert.Equal(before, mid); // no allocation counted, no block taken
        FooDataUncheckedRef.New(heap).Delete(heap); // the owner's own pair counts once each
        var after = allocator.GetSlabStatistics();
        Assert.Equal(1, after.Allocations - before.Allocations);
        Assert.Equal(1, after.Frees - before.Frees);
        Assert.Equal(before.LiveBlocks, after.LiveBlocks);
    }

    [Fact]
    public void A_heap_New_from_a_module_initializer_that_runs_before_the_generated_one_still_finds_the_registration()
    {
        // EarlyInitializer.Touch runs inside this assembly's module initializer; it used the record before the generated
        // initializer registered it, which must not leave the record looking unregistered for the life of the process.
        Assert.Null(EarlyInitializer.Outcome);
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var record = EarlyRecordRef.New(heap);
        record.Value = 3;
        Assert.Equal(3, record.Value);
        record.Delete(heap);
        var other = EarlyDefaultRef.New(heap); // its first use was a default handle's Delete, in the module initializer
        other.Value = 4;
        Assert.Equal(4, other.Value);
        other.Delete(heap);
        var third = EarlyAccessorRef.New(heap); // its first use was a default handle's accessor, in the module initializer
        third.Value = 5;
        Assert.Equal(5, third.Value);
        third.Delete(heap);
        third = EarlyAccessorRef.New(heap);
        Assert.Equal(0, third.Value); // zeroed, and the checked accessor compares the right stamp
        third.Delete(heap);
        Assert.Throws<InvalidOperationException>(() => third.Value);
    }

    private static nint ReadAddress(RecordRef handle) => Unsafe.As<RecordRef, RecordRefLayout>(ref handle).Address;

    /// <summary>The field order of <see cref="RecordRef"/> (its fields are internal): address, generation, stamp offset.</summary>
    private readonly struct RecordRefLayout(nint address, uint generation, int stampOffset)
    {
        public readonly nint Address = address;
        public readonly uint Generation = generation;
        public readonly int StampOffset = stampOffset;
    }

    private struct UnregisteredFactory : ICompiledRecordFactory
    {
        public static CompiledRecord CreateChecked() => throw new NotSupportedException();
        public static CompiledRecord CreateUnchecked() => throw new NotSupportedException();
        public static CompiledRecordView CreateCheckedView() => throw new NotSupportedException();
        public static CompiledRecordView CreateUncheckedView() => throw new NotSupportedException();
        public static CompiledRecordView CreateCheckedItem() => throw new NotSupportedException();
    }
}

/// <summary>A record that only <see cref="EarlyInitializer"/> and its test use.</summary>
[NativeRecord]
public interface IEarlyRecord
{
    int Value { get; set; }
}

/// <summary>A record whose first use is a default handle's Delete in <see cref="EarlyInitializer"/>.</summary>
[NativeRecord]
public interface IEarlyDefault
{
    long Value { get; set; }
}

/// <summary>A record whose first use is a default handle's accessor in <see cref="EarlyInitializer"/>.</summary>
[NativeRecord]
public interface IEarlyAccessor
{
    short Value { get; set; }
}

/// <summary>A user module initializer of the assembly that the generated ones declare: it uses a record through a held heap.</summary>
internal static class EarlyInitializer
{
    /// <summary>Null when the module initializer's New and Delete worked, else the exception.</summary>
    public static Exception? Outcome;

#pragma warning disable CA2255 // a module initializer in a test assembly on purpose: the order of a module's initializers is the subject
    [ModuleInitializer]
    internal static void Touch()
#pragma warning restore CA2255
    {
        try
        {
            using var allocator = new TypeAllocator();
            var heap = allocator.GetThreadHeap();
            var record = EarlyRecordRef.New(heap);
            record.Delete(heap);
            Assert.Throws<ArgumentException>(() => default(EarlyDefaultUncheckedRef).Delete(heap));
            Assert.Throws<InvalidOperationException>(() => default(EarlyAccessorRef).Value); // first use: a default handle's accessor
        }
        catch (Exception e)
        {
            Outcome = e;
        }
    }
}
