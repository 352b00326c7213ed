using Manaloc.Memory;

namespace Manaloc.Lab.Subjects;

/// <summary>
/// One way of holding the live set of the <c>live-set</c> experiment: a container (allocated first, so its bytes
/// can be told apart from the records'), the records, and a replacement of one record during churn.
/// </summary>
/// <remarks>Single-threaded: a child process builds, measures and churns one subject on one thread.</remarks>
public abstract class LiveSetSubject : IDisposable
{
    /// <summary>Plain managed objects in an array: the baseline.</summary>
    public const string Class = "class objects";
    /// <summary>One checked <see cref="TypeAllocator"/> handle object per record.</summary>
    public const string Handles = "TypeAllocator handles";
    /// <summary>One unchecked <see cref="TypeAllocator"/> handle object per record.</summary>
    public const string UncheckedHandles = "TypeAllocator handles, unchecked";
    /// <summary>The generated 16-byte struct handles in an array.</summary>
    public const string StructHandles = "struct handles in an array";
    /// <summary>One <see cref="RecordArray{T}"/> holding every record.</summary>
    public const string Bulk = "RecordArray";

    // Only the representations below: the variant names above are the whole list.
    private protected LiveSetSubject()
    {
    }

    /// <summary>Every representation, in display order; the class objects are the baseline.</summary>
    public static IReadOnlyList<string> All { get; } = [Class, Handles, UncheckedHandles, StructHandles, Bulk];

    /// <summary>Creates the representation named <paramref name="variant"/>.</summary>
    /// <exception cref="ArgumentException">No representation has that name.</exception>
    public static LiveSetSubject Create(string variant) => variant switch
    {
        Class => new ClassSet(),
        Handles => new HandleSet(isChecked: true),
        UncheckedHandles => new HandleSet(isChecked: false),
        StructHandles => new StructHandleSet(),
        Bulk => new BulkSet(),
        _ => throw new ArgumentException($"No live-set representation is called '{variant}'; known: {string.Join(", ", All)}.", nameof(variant)),
    };

    /// <summary>Number of records.</summary>
    public int Count { get; private set; }

    /// <summary>Allocates the container for <paramref name="count"/> records (no records yet).</summary>
    public void Allocate(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(count);
        if (Count != 0) throw new InvalidOperationException("The live set was already allocated.");
        Count = count;
        AllocateContainer(count);
    }

    /// <summary>Creates every record, record i with Bar = i.</summary>
    public void Fill()
    {
        if (Count == 0) throw new InvalidOperationException("Allocate the live set before filling it.");
        for (int i = 0; i < Count; i++) Create(i, i);
    }

    /// <summary>Replaces record <paramref name="index"/> by a new one whose fields derive from <paramref name="value"/>.</summary>
    public abstract void Replace(int index, int value);

    /// <summary>Record <paramref name="index"/>'s Bar.</summary>
    public abstract int Read(int index);

    /// <inheritdoc/>
    public abstract void Dispose();

    /// <summary>Allocates the container alone.</summary>
    private protected abstract void AllocateContainer(int count);

    /// <summary>Creates record <paramref name="index"/> with fields derived from <paramref name="value"/>.</summary>
    private protected abstract void Create(int index, int value);

    /// <summary>
    /// Writes the fields. Generic over the record so that a struct handle is written through its own accessors (a
    /// constrained call: no boxing), as a caller of a generated handle writes it; classes and interface handles go
    /// through the interface as before.
    /// </summary>
    private static void Set<TRecord>(TRecord f, int value)
        where TRecord : IFooData
    {
        f.Bar = value;
        f.Jar = value * 3L;
        f.Car = value * 0.5;
        f.Tar = (byte)value;
    }

    /// <summary>Plain managed objects: what the native paths are measured against.</summary>
    private sealed class ClassSet : LiveSetSubject
    {
        private ClassFoo[] _items = [];
        private protected override void AllocateContainer(int count) => _items = new ClassFoo[count];
        private protected override void Create(int index, int value) { var f = new ClassFoo(); Set(f, value); _items[index] = f; }
        public override void Replace(int index, int value) => Create(index, value);
        public override int Read(int index) => _items[index].Bar;
        public override void Dispose() => _items = [];
    }

    /// <summary>One TypeAllocator handle (a managed object) per record, its data in native memory.</summary>
    private sealed class HandleSet(bool isChecked) : LiveSetSubject
    {
        private readonly TypeAllocator _allocator = new(new TypeAllocatorOptions { Name = "live-set handles", Checked = isChecked });
        private IFooData[] _items = [];

        private protected override void AllocateContainer(int count) => _items = new IFooData[count];

        private protected override void Create(int index, int value) { var f = _allocator.New<IFooData>(); Set(f, value); _items[index] = f; }

        public override void Replace(int index, int value)
        {
            _allocator.Delete(_items[index]);
            Create(index, value);
        }

        public override int Read(int index) => _items[index].Bar;

        public override void Dispose()
        {
            foreach (var f in _items) if (f is not null) _allocator.Delete(f);
            _items = [];
            _allocator.Dispose();
        }
    }

    /// <summary>The generated 16-byte struct handles (checked) in one array: no managed object per record, no reference in the array.</summary>
    private sealed class StructHandleSet : LiveSetSubject
    {
        private readonly TypeAllocator _allocator = new(new TypeAllocatorOptions { Name = "live-set struct handles" });
        private readonly TypeAllocator.ThreadHeap _heap;
        private FooDataRef[] _items = [];

        // The live-set experiment creates, runs and disposes each subject on one thread (the measuring thread).
#pragma warning disable MNL107 // held by a subject that never leaves the thread that built it
        public StructHandleSet() => _heap = _allocator.GetThreadHeap();
#pragma warning restore MNL107

        private protected override void AllocateContainer(int count) => _items = new FooDataRef[count];
        private protected override void Create(int index, int value) { var f = FooDataRef.New(_heap); Set(f, value); _items[index] = f; }

        public override void Replace(int index, int value)
        {
            _items[index].Delete(_heap);
            Create(index, value);
        }

        public override int Read(int index) => _items[index].Bar;

        public override void Dispose()
        {
            foreach (var f in _items) if (f.IsAllocated) f.Delete(_heap);
            _items = [];
            _allocator.Dispose();
        }
    }

    /// <summary>One RecordArray: every record in one native block, one managed view. Replacing a record rewrites it in place.</summary>
    private sealed class BulkSet : LiveSetSubject
    {
        private readonly TypeAllocator _allocator = new(new TypeAllocatorOptions { Name = "live-set bulk" });
        private RecordArray<IFooData>? _array;

        private protected override void AllocateContainer(int count) => _array = _allocator.NewArray<IFooData>(count);

        private protected override void Create(int index, int value) => Set(_array!.MoveTo(index), value);
        public override void Replace(int index, int value) => Create(index, value);
        public override int Read(int index) => _array!.MoveTo(index).Bar;

        public override void Dispose()
        {
            _array?.Dispose();
            _array = null;
            _allocator.Dispose();
        }
    }

    private sealed class ClassFoo : IFooData
    {
        public int Bar { get; set; }
        public long Jar { get; set; }
        public double Car { get; set; }
        public byte Tar { get; set; }
    }
}
