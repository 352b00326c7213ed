using System.Diagnostics.Tracing;
using System.Runtime.CompilerServices;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary>Debug mode reports a rented buffer dropped without Dispose, with the stack of its rent; a disposed one names its manager.</summary>
public sealed class RentedBufferLeakTests
{
    [Fact]
    public void Debug_mode_reports_a_RentedBuffer_never_disposed_with_the_stack_where_it_was_rented()
    {
        var leaks = new List<RentedBufferLeak>();
        using var listener = new BufferLeakListener();
        using var manager = new BufferManager(new BufferManagerOptions
        {
            Name = "leaky-" + Guid.NewGuid().ToString("N")[..8],
            DebugMode = true,
            LeakReported = leak => { lock (leaks) leaks.Add(leak); },
        });
        RentAndForget(manager, 3000);
        using (var kept = manager.RentBuffer(500)) { } // disposed: never reported
        CollectUntil(() => { lock (leaks) return leaks.Count >= 1; });
        RentedBufferLeak reported;
        lock (leaks) reported = Assert.Single(leaks);
        Assert.Equal(manager.Name, reported.ManagerName);
        Assert.Equal(3000, reported.Length);
        Assert.Contains(nameof(RentAndForget), reported.RentedAt, StringComparison.Ordinal);
        Assert.DoesNotContain("BufferManager.RentBuffer", reported.RentedAt, StringComparison.Ordinal); // the stack starts at the caller
        Assert.Contains($"3000 bytes from BufferManager '{manager.Name}' was never disposed", reported.ToString(), StringComparison.Ordinal);
        Assert.Contains(nameof(RentAndForget), reported.ToString(), StringComparison.Ordinal);
        CollectUntil(() => listener.Contains(manager.Name));
        Assert.True(listener.Contains(manager.Name), "the BufferLeak event names the manager");
    }

    [Fact]
    public void Without_debug_mode_nothing_is_tracked()
    {
        var leaks = new List<RentedBufferLeak>();
        using var manager = new BufferManager(new BufferManagerOptions { LeakReported = leak => { lock (leaks) leaks.Add(leak); } });
        RentAndForget(manager, 100);
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        lock (leaks) Assert.Empty(leaks);
    }

    [Fact]
    public void A_disposed_RentedBuffer_throws_naming_its_manager()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "wire" });
        var buffer = manager.RentBuffer(64);
        var copy = buffer;
        buffer.Dispose();
        var e = Assert.Throws<ObjectDisposedException>(() => copy.Span.Length);
        Assert.Contains("BufferManager 'wire'", e.Message, StringComparison.Ordinal);
        Assert.Contains("64 bytes", e.Message, StringComparison.Ordinal);
        Assert.Equal(nameof(RentedBuffer), e.ObjectName);
        var empty = Assert.Throws<ObjectDisposedException>(() => default(RentedBuffer).Array);
        Assert.Contains("default", empty.Message, StringComparison.Ordinal);
    }

    [MethodImpl(MethodImplOptions.NoInlining)] // the buffer must be unreachable once this returns
    private static void RentAndForget(BufferManager manager, int length) => _ = manager.RentBuffer(length);

    private static void CollectUntil(Func<bool> done)
    {
        for (int i = 0; i < 50 && !done(); i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            if (!done()) Thread.Sleep(20); // the event listener's dispatch may lag the finalizer
        }
    }

    private sealed class BufferLeakListener : EventListener
    {
        private readonly List<string> _managers = [];

        public bool Contains(string manager)
        {
            lock (_managers) return _managers.Contains(manager);
        }

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Manaloc") EnableEvents(eventSource, EventLevel.Verbose);
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventId == 8 && e.Payload is { Count: 3 } p && p[2] is string stack && stack.Contains(nameof(RentAndForget), StringComparison.Ordinal))
            {
                lock (_managers) _managers.Add((string)p[0]!);
            }
        }
    }
}
