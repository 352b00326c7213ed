using BenchmarkDotNet.Attributes;
using Manaloc.Threading;

namespace Manaloc.Benchmarks;

/// <summary>
/// Uncontended enter/exit pairs: the fixed cost each lock adds to a short critical section.
/// Contended behaviour is the lab's rwlock grid. Anchor: ReaderWriterLockSlim.
/// </summary>
[MemoryDiagnoser]
public class ReaderWriterLockBenchmarks
{
    private readonly object _monitor = new();
    private readonly Lock _lock = new();
    private readonly ReaderWriterLockSlim _rwls = new(LockRecursionPolicy.NoRecursion);
    private readonly SlimReaderWriterLock _slim = new();
    private readonly SlimReaderWriterLock _outer = new();
    private int _value;

    /// <summary>Releases the runtime's lock.</summary>
    [GlobalCleanup]
    public void Cleanup() => _rwls.Dispose();

    /// <summary>Anchor: a read lock of ReaderWriterLockSlim.</summary>
    [Benchmark(Baseline = true)]
    public int RwlsRead()
    {
        _rwls.EnterReadLock();
        int v = _value;
        _rwls.ExitReadLock();
        return v;
    }

    /// <summary>A write lock of ReaderWriterLockSlim.</summary>
    [Benchmark]
    public void RwlsWrite()
    {
        _rwls.EnterWriteLock();
        _value++;
        _rwls.ExitWriteLock();
    }

    /// <summary>Ours: a read lock.</summary>
    [Benchmark]
    public int SlimRead()
    {
        _slim.EnterReadLock();
        int v = _value;
        _slim.ExitReadLock();
        return v;
    }

    /// <summary>Ours: a read lock taken while the thread holds another (the record's list path), with the outer pair.</summary>
    [Benchmark]
    public int SlimReadNested()
    {
        _outer.EnterReadLock();
        _slim.EnterReadLock();
        int v = _value;
        _slim.ExitReadLock();
        _outer.ExitReadLock();
        return v;
    }

    /// <summary>Ours: the write lock.</summary>
    [Benchmark]
    public void SlimWrite()
    {
        _slim.EnterWriteLock();
        _value++;
        _slim.ExitWriteLock();
    }

    /// <summary>The <c>lock</c> statement on an object.</summary>
    [Benchmark]
    public void MonitorLock()
    {
        lock (_monitor) _value++;
    }

    /// <summary>System.Threading.Lock.</summary>
    [Benchmark]
    public void ThreadingLock()
    {
        lock (_lock) _value++;
    }
}
