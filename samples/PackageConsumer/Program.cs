using System.Buffers;
using Manaloc.Buffers;
using Manaloc.Diagnostics;
using Manaloc.Memory;
using Manaloc.Pooling;

// A user's first program against the package, then every documentation snippet.
// Exits non-zero (an exception) if anything the package README promises does not hold.

string location = typeof(BufferManager).Assembly.Location;
Console.WriteLine($"Manaloc {typeof(BufferManager).Assembly.GetName().Version} from {location}");

// BufferManager.Shared is Manaloc's manager, not the inherited ArrayPool<byte>.Shared.
Check(!ReferenceEquals(BufferManager.Shared, ArrayPool<byte>.Shared), "BufferManager.Shared is ArrayPool<byte>.Shared");
byte[] first = BufferManager.Shared.Rent(4096);
BufferManager.Shared.Return(first);
Check(ReferenceEquals(first, BufferManager.Shared.Rent(4096)), "a returned buffer was not reused");

using (var pool = new SemiLocalPool<List<int>>(() => new List<int>()))
{
    var list = pool.Rent();
    pool.Return(list);
    Check(ReferenceEquals(list, pool.Rent()), "a returned object was not reused");
}

using (var allocator = new TypeAllocator())
{
    var record = allocator.New<IConsumerRecord>();
    record.Value = 42;
    Check(record.Value == 42, "a native record lost its value");
    allocator.Delete(record);
    // Checked handles (the default): a use after Delete throws InvalidOperationException (ObjectDisposedException derives from it).
    Check(Throws<InvalidOperationException>(() => _ = record.Value), "a deleted record could still be read");
}

// A [NativeRecord] interface: the package's generator implements it, and its build/Manaloc.targets enables the
// interceptors that send this New to the compiled registration (no Reflection.Emit, no trim/AOT warning).
using (var allocator = new TypeAllocator())
{
    var compiled = allocator.New<IConsumerCompiled>();
    compiled.Value = 7;
    Check(compiled.Value == 7, "a compiled native record lost its value");
    Check(compiled.GetType().Name == "IConsumerCompiled_Checked", $"the compiled record's class has the name {compiled.GetType().Name}");
    allocator.Delete(compiled);
    Check(typeof(IConsumerCompiled).Assembly.GetTypes().Any(t => t.Name.Contains("NativeRecordInterceptors", StringComparison.Ordinal)),
        "no interceptors were generated: the package's build/Manaloc.targets did not enable them");
}

Check(ManalocTelemetry.MeterNames.Length == 3, "ManalocTelemetry.MeterNames");

int snippets = 0;
#if SNIPPETS
foreach (var (name, run) in Snippets.Registry.All)
{
    Console.WriteLine($"snippet {name}");
    run();
    snippets++;
}
#endif
Console.WriteLine($"package consumer: all checks passed, {snippets} documentation snippet(s) compiled and ran");

static void Check(bool condition, string failure)
{
    if (!condition) throw new InvalidOperationException("package consumer: " + failure);
}

static bool Throws<TException>(Action action) where TException : Exception
{
    try { action(); return false; }
    catch (TException) { return true; }
}

/// <summary>A native record declared by the consumer (TypeAllocator implements public interfaces).</summary>
public interface IConsumerRecord
{
    /// <summary>A value stored in native memory.</summary>
    long Value { get; set; }
}

/// <summary>A native record implemented at compile time by the package's source generator.</summary>
[NativeRecord]
public interface IConsumerCompiled
{
    /// <summary>A value stored in native memory.</summary>
    long Value { get; set; }
}
