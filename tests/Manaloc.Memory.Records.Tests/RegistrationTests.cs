using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>The registration checks a compiled layout against the runtime before any record uses it.</summary>
public class RegistrationTests
{
    [Fact]
    public void A_field_size_that_disagrees_with_the_runtime_is_refused_naming_the_field()
    {
        var e = Assert.Throws<InvalidOperationException>(() => CompiledRecords.Register<IHandWritten, HandWrittenFactory>(16, 8,
            [CompiledRecords.Field("Count", typeof(int), 0, 8, 8), CompiledRecords.Field("Id", typeof(long), 8, 8, 8)]));
        Assert.Contains("field 'Count'", e.Message);
        Assert.Contains("assumed 8 bytes for Int32, this runtime has 4", e.Message);
    }

    [Fact]
    public void Overlapping_misaligned_or_outside_fields_are_refused()
    {
        Assert.Contains("overlaps", Assert.Throws<InvalidOperationException>(() => CompiledRecords.Register<IHandWritten, HandWrittenFactory>(16, 8,
            [CompiledRecords.Field("Count", typeof(int), 4, 4, 4), CompiledRecords.Field("Id", typeof(long), 0, 8, 8)])).Message);
        Assert.Contains("does not fit", Assert.Throws<InvalidOperationException>(() => CompiledRecords.Register<IHandWritten, HandWrittenFactory>(16, 8,
            [CompiledRecords.Field("Count", typeof(int), 2, 4, 4), CompiledRecords.Field("Id", typeof(long), 8, 8, 8)])).Message);
        Assert.Contains("does not fit", Assert.Throws<InvalidOperationException>(() => CompiledRecords.Register<IHandWritten, HandWrittenFactory>(16, 8,
            [CompiledRecords.Field("Count", typeof(int), 0, 4, 4), CompiledRecords.Field("Id", typeof(long), 16, 8, 8)])).Message);
        Assert.Contains("not a valid record shape", Assert.Throws<InvalidOperationException>(() => CompiledRecords.Register<IHandWritten, HandWrittenFactory>(12, 8,
            [CompiledRecords.Field("Count", typeof(int), 0, 4, 4)])).Message);
    }

    [Fact]
    public void A_valid_hand_written_registration_serves_New_and_is_kept_once()
    {
        var first = CompiledRecords.Register<IHandWrittenValid, ValidFactory>(16, 8, [CompiledRecords.Field("Count", typeof(int), 8, 4, 4), CompiledRecords.Field("Id", typeof(long), 0, 8, 8)]);
        var second = CompiledRecords.Register<IHandWrittenValid, ValidFactory>(16, 8, [CompiledRecords.Field("Count", typeof(int), 8, 4, 4), CompiledRecords.Field("Id", typeof(long), 0, 8, 8)]);
        Assert.Same(first, second);
        using var allocator = new TypeAllocator();
        var record = allocator.New<IHandWrittenValid>();
        Assert.IsType<ValidChecked>(record);
        record.Id = 5;
        Assert.Equal(5, record.Id);
        allocator.Delete(record);
    }
}

public interface IHandWritten
{
    int Count { get; set; }
    long Id { get; set; }
}

public interface IHandWrittenValid
{
    int Count { get; set; }
    long Id { get; set; }
}

internal sealed class HandWritten : CompiledRecord, IHandWritten
{
    private static readonly int s_stampOffset = CompiledRecords.StampOffsetOf(16, 8);
    public int Count { get => CheckedField<int>(0, s_stampOffset); set => CheckedField<int>(0, s_stampOffset) = value; }
    public long Id { get => CheckedField<long>(8, s_stampOffset); set => CheckedField<long>(8, s_stampOffset) = value; }
}

internal sealed class HandWrittenView : CompiledRecordView, IHandWritten
{
    public int Count { get => ViewField<int>(0); set => ViewField<int>(0) = value; }
    public long Id { get => ViewField<long>(8); set => ViewField<long>(8) = value; }
}

internal struct HandWrittenFactory : ICompiledRecordFactory
{
    public static CompiledRecord CreateChecked() => new HandWritten();
    public static CompiledRecord CreateUnchecked() => new HandWritten();
    public static CompiledRecordView CreateCheckedView() => new HandWrittenView();
    public static CompiledRecordView CreateUncheckedView() => new HandWrittenView();
    public static CompiledRecordView CreateCheckedItem() => new HandWrittenView();
}

internal sealed class ValidChecked : CompiledRecord, IHandWrittenValid
{
    private static readonly int s_stampOffset = CompiledRecords.StampOffsetOf(16, 8);
    public int Count { get => CheckedField<int>(8, s_stampOffset); set => CheckedField<int>(8, s_stampOffset) = value; }
    public long Id { get => CheckedField<long>(0, s_stampOffset); set => CheckedField<long>(0, s_stampOffset) = value; }
}

internal sealed class ValidView : CompiledRecordView, IHandWrittenValid
{
    public int Count { get => ViewField<int>(8); set => ViewField<int>(8) = value; }
    public long Id { get => ViewField<long>(0); set => ViewField<long>(0) = value; }
}

internal sealed class ValidItem : CompiledRecordView, IHandWrittenValid
{
    public int Count { get => ItemField<int>(8); set => ItemField<int>(8) = value; }
    public long Id { get => ItemField<long>(0); set => ItemField<long>(0) = value; }
}

internal sealed class ValidUnchecked : CompiledRecord, IHandWrittenValid
{
    public int Count { get => UncheckedField<int>(8); set => UncheckedField<int>(8) = value; }
    public long Id { get => UncheckedField<long>(0); set => UncheckedField<long>(0) = value; }
}

internal struct ValidFactory : ICompiledRecordFactory
{
    public static CompiledRecord CreateChecked() => new ValidChecked();
    public static CompiledRecord CreateUnchecked() => new ValidUnchecked();
    public static CompiledRecordView CreateCheckedView() => new ValidView();
    public static CompiledRecordView CreateUncheckedView() => new ValidView();
    public static CompiledRecordView CreateCheckedItem() => new ValidItem();
}
