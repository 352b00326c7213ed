using System.Collections.Concurrent;
using Manaloc.Buffers;
using Manaloc.Memory;
using Manaloc.Pooling;
using Manaloc.Threading;

namespace Manaloc.Lab.Soak;

/// <summary>A record the soak creates on one thread and checks and deletes on another.</summary>
public interface ISoakRecord
{
    /// <summary>Unique per record.</summary>
    long Id { get; set; }

    /// <summary>A hash of <see cref="Id"/>: a record whose memory was reused or overwritten fails the check.</summary>
    long Check { get; set; }
}

/// <summary>A pooled object that knows whether someone holds it (a second holder is a double hand-out).</summary>
internal sealed class SoakPooled
{
    public int Holders;
}

/// <summary>
/// Every component at once: load threads pick random operations (records, pool, buffers, the
/// reader-writer lock, posts to the dispatcher); one thread creates, feeds and shuts down
/// dispatchers in cycles; two threads ping-pong on a pair of events (not stopped by the quiet point). Every check that fails adds
/// a violation; <see cref="StopAndCheck"/> drains everything and checks that the counts balance.
/// Every timed hang check goes through <see cref="Hang"/>, so a stall of the whole process (seen by
/// the <see cref="Heartbeat"/>) is counted as a stall, not reported as a hang.
/// </summary>
internal sealed partial class SoakRun : IDisposable
{
    private const int MaxInFlight = 2048;
    private const int MinBufferShift = 4, MaxBufferShift = 14; // buffers of 16 B to 16 KB
    private static readonly TimeSpan HangLimit = TimeSpan.FromSeconds(30);
    private const string DispatcherStopWait = "dispatcher workers' stop", ThreadEndWait = "soak thread's end";

    private readonly int _loadThreads;
    private readonly TypeAllocator _allocator = new(new TypeAllocatorOptions { Name = "soak" });
    private readonly SemiLocalPool<SoakPooled> _pool = new(PoolPolicies.Create(() => new SoakPooled()), new PoolOptions { Name = "soak", MaxRetained = 512 });
    private readonly BufferManager _buffers = new(new BufferManagerOptions { Name = "soak", MaxRetainedBytesPerClass = 1 << 20 });
    private readonly SlimReaderWriterLock _lock = new();
    private readonly EventPingPong _pingPong;
    // Items in flight between threads: fixed slots, so the bookkeeping itself never grows.
    private readonly HandOffSlots<ISoakRecord> _records = new(MaxInFlight);
    private readonly HandOffSlots<SoakPooled> _pooled = new(MaxInFlight);
    private readonly HandOffSlots<byte[]> _rented = new(MaxInFlight);
    // Buffers held now, by identity, with the pattern each was filled with (a new buffer's contents are not zeroed, so no marker inside it).
    private readonly ConcurrentDictionary<byte[], byte> _heldBuffers = NewHeldSet();
    private readonly List<Thread> _threads = [];
    private DispatcherCycle? _cycle;
    private long _nextId;
    private int _writers, _readers;
    private volatile bool _stop;

    public SoakRun(int loadThreads)
    {
        _loadThreads = loadThreads;
        Hang = new HangWatch(Heartbeat, HangLimit);
        _pingPong = new EventPingPong(Hang, Quiet, Violation, () => Interlocked.Increment(ref Counters.EventHandOffs));
    }

    /// <summary>Ticks every 10 ms on its own thread and records when the process did not run.</summary>
    public Heartbeat Heartbeat { get; } = new();

    /// <summary>Tells a hang from a stall of the whole process, and counts the stalls.</summary>
    public HangWatch Hang { get; }

    public SoakCounters Counters { get; } = new();

    public ConcurrentQueue<string> Violations { get; } = new();

    /// <summary>Native bytes the soak's record allocator has reserved.</summary>
    public long NativeBytes => _allocator.GetSlabStatistics().ReservedBytes;

    public void Start()
    {
        Heartbeat.Start();
        var parking = new List<Thread>();
        for (int i = 0; i < _loadThreads; i++)
        {
            int seed = i;
            parking.Add(new Thread(() => Guard(() => Load(seed), parks: true)) { IsBackground = true, Name = $"soak load {i}" });
        }
        parking.Add(new Thread(() => Guard(DispatcherCycles, parks: true)) { IsBackground = true, Name = "soak dispatcher cycles" });
        // The ping-pong threads do not park at the quiet point: each waits on its partner, and a side that parked holding
        // the signal (set, then preempted before its check while the partner passed the signal back and went on to wait)
        // would leave the partner waiting and the pause waiting for the partner until both timed out. They allocate
        // nothing once running (a Set, a Wait on an event whose park exists, interlocked counters), so they cannot
        // change the heap the sampler measures.
        var free = new List<Thread>
        {
            new(() => Guard(_pingPong.RunPing, parks: false)) { IsBackground = true, Name = "soak ping" },
            new(() => Guard(_pingPong.RunPong, parks: false)) { IsBackground = true, Name = "soak pong" },
        };
        foreach (var t in parking) Quiet.Join();
        _threads.AddRange(parking);
        _threads.AddRange(free);
        foreach (var t in _threads) t.Start();
    }

    private void Violation(string message) => Violations.Enqueue(message);

    private void Guard(Action body, bool parks)
    {
        try { body(); }
        catch (Exception e) { Violation($"{Thread.CurrentThread.Name}: unexpected {e.GetType().Name}: {e.Message}"); }
        finally
        {
            if (parks) Quiet.Leave();
        }
    }

    private void Load(int seed)
    {
        var random = new Random(seed * 7919 + Environment.TickCount);
        while (!_stop)
        {
            Quiet.Check(); // holds nothing here: every operation below finishes within one pass
            switch (random.Next(9))
            {
                case 0: NewRecord(random.Next(MaxInFlight)); break;
                case 1: DeleteRecord(random.Next(MaxInFlight)); break;
                case 2: RentPooled(random.Next(MaxInFlight)); break;
                case 3: ReturnPooled(random.Next(MaxInFlight)); break;
                case 4: RentBuffer(random); break;
                case 5: ReturnBuffer(random.Next(MaxInFlight)); break;
                case 6: TakeLock(write: random.Next(10) == 0); break;
                case 7: Post(); break;
                default:
                    if (random.Next(2000) == 0) { _pool.Trim(); _buffers.Trim(); Interlocked.Increment(ref Counters.Trims); }
                    break;
            }
        }
    }

    private static long Mix(long id) => (long)((ulong)id * 0x9E3779B97F4A7C15UL ^ 0xD6E8FEB86659FD93UL);

    private void NewRecord(int slot)
    {
        var record = _allocator.New<ISoakRecord>();
        long id = Interlocked.Increment(ref _nextId);
        record.Id = id;
        record.Check = Mix(id);
        Interlocked.Increment(ref Counters.RecordsCreated);
        if (!_records.TryLeave(slot, record)) CheckAndDelete(record); // deleted later, usually by another thread
    }

    private void DeleteRecord(int slot)
    {
        if (_records.TryTake(slot, out var record)) CheckAndDelete(record);
    }

    private void CheckAndDelete(ISoakRecord record)
    {
        if (record.Check != Mix(record.Id)) Violation($"record {record.Id} corrupted: check {record.Check:x}");
        _allocator.Delete(record);
        Interlocked.Increment(ref Counters.RecordsDeleted);
    }

    private void RentPooled(int slot)
    {
        var item = _pool.Rent();
        if (Interlocked.CompareExchange(ref item.Holders, 1, 0) != 0) Violation("pool: an object was handed out while someone held it");
        Interlocked.Increment(ref Counters.PoolRents);
        if (!_pooled.TryLeave(slot, item)) GivePooledBack(item); // left: returned later, usually by another thread
    }

    private void ReturnPooled(int slot)
    {
        if (_pooled.TryTake(slot, out var item)) GivePooledBack(item);
    }

    private void GivePooledBack(SoakPooled item)
    {
        Volatile.Write(ref item.Holders, 0);
        _pool.Return(item);
        Interlocked.Increment(ref Counters.PoolReturns);
    }

    private void RentBuffer(Random random)
    {
        int size = 1 << random.Next(MinBufferShift, MaxBufferShift + 1);
        var buffer = _buffers.Rent(size);
        if (buffer.Length < size) Violation($"buffers: asked {size} bytes, got {buffer.Length}");
        byte pattern = (byte)random.Next(1, 256);
        if (!_heldBuffers.TryAdd(buffer, pattern)) Violation("buffers: a buffer was handed out while someone held it");
        buffer.AsSpan().Fill(pattern);
        Interlocked.Increment(ref Counters.BufferRents);
        if (!_rented.TryLeave(random.Next(MaxInFlight), buffer)) GiveBufferBack(buffer);
    }

    private void ReturnBuffer(int slot)
    {
        if (_rented.TryTake(slot, out var buffer)) GiveBufferBack(buffer);
    }

    private void GiveBufferBack(byte[] buffer)
    {
        if (!_heldBuffers.TryRemove(buffer, out byte pattern)) Violation("buffers: returned a buffer nobody held");
        else if (buffer.AsSpan().IndexOfAnyExcept(pattern) >= 0) Violation("buffers: a rented buffer was written by someone else");
        _buffers.Return(buffer);
        Interlocked.Increment(ref Counters.BufferReturns);
    }

    private void TakeLock(bool write)
    {
        if (write)
        {
            _lock.EnterWriteLock();
            if (Interlocked.Increment(ref _writers) != 1 || Volatile.Read(ref _readers) != 0) Violation("lock: a writer is in with another writer or a reader");
            Interlocked.Decrement(ref _writers);
            _lock.ExitWriteLock();
            Interlocked.Increment(ref Counters.WriteLocks);
        }
        else
        {
            _lock.EnterReadLock();
            Interlocked.Increment(ref _readers);
            if (Volatile.Read(ref _writers) != 0) Violation("lock: a reader is in with a writer");
            Interlocked.Decrement(ref _readers);
            _lock.ExitReadLock();
            Interlocked.Increment(ref Counters.ReadLocks);
        }
    }

    public void Dispose()
    {
        _stop = true;
        _pool.Dispose();
        _buffers.Dispose();
        _allocator.Dispose();
        _pingPong.Dispose();
        Heartbeat.Dispose();
    }
}
