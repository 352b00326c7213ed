namespace Manaloc.Analyzers.Tests;

/// <summary>Each rule: what it must flag (marked {|MNL1xx:…|} at the reported span) and what it must leave alone.</summary>
public sealed class RuleTests
{
    [Fact]
    public Task Mnl101_flags_a_rent_that_is_never_returned() => Verify.Analyzer("""
        class C
        {
            void M(int n)
            {
                byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(n)|};
                a[0] = 1;
            }
        }
        """);

    [Fact]
    public Task Mnl101_flags_a_return_outside_finally_after_a_call_that_can_throw() => Verify.Analyzer("""
        class C
        {
            void M(System.IO.Stream s, int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                s.Write(a, 0, n);
                {|MNL101:ArrayPool<byte>.Shared.Return(a)|};
            }
        }
        """);

    [Fact]
    public Task Mnl101_leaves_rent_try_finally_escape_and_stackalloc_fallback_alone() => Verify.Analyzer("""
        class C
        {
            byte[]? _field;
            void TryFinally(System.IO.Stream s, int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                try { s.Write(a, 0, n); }
                finally { ArrayPool<byte>.Shared.Return(a); }
            }
            void Field(int n) { byte[] a = ArrayPool<byte>.Shared.Rent(n); _field = a; }
            byte[] Returned(int n) { var a = ArrayPool<byte>.Shared.Rent(n); return a; }
            void Fallback(int n)
            {
                byte[]? rented = null;
                Span<byte> span = n <= 64 ? stackalloc byte[64] : (rented = ArrayPool<byte>.Shared.Rent(n));
                span.Clear();
                if (rented != null) ArrayPool<byte>.Shared.Return(rented);
            }
        }
        """);

    [Fact]
    public Task Mnl102_flags_a_double_return_and_a_use_after_return() => Verify.Analyzer("""
        class C
        {
            void Twice(int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                ArrayPool<byte>.Shared.Return(a);
                {|MNL102:ArrayPool<byte>.Shared.Return(a)|};
            }
            int After(int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                ArrayPool<byte>.Shared.Return(a);
                return {|MNL102:a|}[0];
            }
        }
        """);

    [Fact]
    public Task Mnl102_leaves_a_return_on_one_branch_and_a_use_on_the_other_alone() => Verify.Analyzer("""
        class C
        {
            void M(int n, bool c)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                if (c) { ArrayPool<byte>.Shared.Return(a); return; }
                a[0] = 1;
                ArrayPool<byte>.Shared.Return(a);
            }
        }
        """);

    [Fact]
    public Task Mnl103_flags_an_undisposed_buffer_and_a_use_after_dispose() => Verify.Analyzer("""
        class C
        {
            readonly BufferManager _m = new();
            void Leak(int n) { RentedBuffer {|MNL103:b = _m.RentBuffer(n)|}; b.Span.Clear(); }
            int After(int n)
            {
                RentedBuffer b = _m.RentBuffer(n);
                b.Dispose();
                return {|MNL103:b|}.Length;
            }
            void Fine(int n) { using RentedBuffer b = _m.RentBuffer(n); b.Span.Clear(); }
        }
        """);

    [Fact]
    public Task Mnl104_flags_a_pooled_object_used_after_return() => Verify.Analyzer("""
        class C
        {
            readonly IObjectPool<List<int>> _pool = new LockedPool<List<int>>(() => new List<int>());
            void M()
            {
                List<int> list = _pool.Rent();
                _pool.Return(list);
                {|MNL104:list|}.Add(1);
            }
            void Fine()
            {
                List<int> list = _pool.Rent();
                try { list.Add(1); } finally { _pool.Return(list); }
            }
        }
        """);

    [Fact]
    public Task Mnl105_flags_use_after_delete_double_delete_and_array_use_after_dispose() => Verify.Analyzer("""
        [NativeRecord] public interface IRec { int X { get; set; } }
        class C
        {
            readonly TypeAllocator _a = new();
            void UseAfter() { IRec r = _a.New<IRec>(); _a.Delete(r); {|MNL105:r|}.X = 1; }
            void Twice() { IRec r = _a.New<IRec>(); _a.Delete(r); {|MNL105:_a.Delete(r)|}; }
            int Array(int n) { var arr = _a.NewArray<IRec>(n); arr.Dispose(); return {|MNL105:arr|}.Length; }
            void Fine() { IRec r = _a.New<IRec>(); r.X = 1; _a.Delete(r); }
        }
        """);

    [Fact]
    public Task Mnl106_flags_a_discarded_or_undisposed_scope_and_a_dropped_event() => Verify.Analyzer("""
        class C
        {
            readonly SlimReaderWriterLock _rw = new();
            int _v;
            void Discarded() { {|MNL106:_rw.EnterWriteScope()|}; _v++; }
            void Undisposed() { var {|MNL106:s = _rw.EnterReadScope()|}; _v++; }
            void Dropped() { var {|MNL106:e = new EconomicResetEvent()|}; e.Set(); }
            void Fine() { using (_rw.EnterWriteScope()) _v++; }
        }
        """);

    [Fact]
    public Task Mnl107_flags_a_held_heap_after_await_in_a_field_and_in_task_run() => Verify.Analyzer("""
        class C
        {
            readonly TypeAllocator _a = new();
            TypeAllocator.ThreadHeap? _heap;
            async Task AfterAwait()
            {
                var heap = _a.GetThreadHeap();
                await Task.Yield();
                Console.WriteLine({|MNL107:heap|}.ThreadId);
            }
            void Field() { {|MNL107:_heap = _a.GetThreadHeap()|}; }
            Task Run() { var heap = _a.GetThreadHeap(); return Task.Run(() => Console.WriteLine({|MNL107:heap|}.ThreadId)); }
            void Fine() { var heap = _a.GetThreadHeap(); Console.WriteLine(heap.ThreadId); }
        }
        """);
}
