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
    public Task Mnl111_flags_a_return_outside_finally_after_a_call_that_can_throw() => Verify.Analyzer("""
        class C
        {
            void M(System.IO.Stream s, int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                s.Write(a, 0, n);
                {|MNL111:ArrayPool<byte>.Shared.Return(a)|};
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
    public Task Mnl103_flags_a_memory_owner_from_a_memory_pool_leaked_or_used_after_dispose() => Verify.Analyzer("""
        class C
        {
            readonly BufferMemoryPool _pool = new();
            readonly MemoryPool<byte> _any = new BufferMemoryPool();
            IMemoryOwner<byte>? _kept;
            void Leak(int n) { IMemoryOwner<byte> {|MNL103:o = _pool.Rent(n)|}; o.Memory.Span.Clear(); }
            int After(int n)
            {
                var o = _any.Rent(n);
                o.Dispose();
                return {|MNL103:o|}.Memory.Length;
            }
            void Fine(int n) { using IMemoryOwner<byte> o = _pool.Rent(n); o.Memory.Span.Clear(); }
            IMemoryOwner<byte> Returned(int n) { var o = _pool.Rent(n); o.Memory.Span.Fill(1); return o; }
            void Stored(int n) { _kept = _pool.Rent(n); }
            void TryFinally(System.IO.Stream s, int n)
            {
                IMemoryOwner<byte> o = _pool.Rent(n);
                try { s.Write(o.Memory.Span); }
                finally { o.Dispose(); }
            }
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

    [Fact]
    public Task Mnl107_flags_a_held_heap_captured_by_a_lambda_nested_in_a_thread_body() => Verify.Analyzer("""
        class C
        {
            readonly TypeAllocator _a = new();
            static string Attempt(Action action) { action(); return "ok"; }
            void Trial()
            {
                var heap = _a.GetThreadHeap();
                Console.WriteLine(heap.ThreadId);
                string result = "";
                var t = new Thread(() => { result = Attempt(() => Console.WriteLine({|MNL107:heap|}.ThreadId)); });
                t.Start();
                t.Join();
            }
        }
        """);
}

/// <summary>MNL108, MNL109 and the call-site half of MNL107: what each must flag and what it must leave alone.</summary>
public sealed class RecordRuleTests
{
    /// <summary>The shape of a generated checked handle (the generator does not run in these tests; the corpus runs it).</summary>
    private const string Handle = """
        [NativeRecord] public interface IOrder { int Price { get; set; } }
        public readonly struct OrderRef
        {
            public static OrderRef New(TypeAllocator allocator) => default;
            public RecordRef Handle => default;
            public bool IsAllocated => Handle.IsAllocated;
            public int Price { get => 0; set { } }
            public void Delete(TypeAllocator allocator) { }
        }

        """;

    [Fact]
    public Task Mnl108_flags_a_default_handle_used_or_deleted() => Verify.Analyzer(Handle + """
        class C
        {
            readonly TypeAllocator _a = new();
            int Literal() => {|MNL108:default(OrderRef)|}.Price;
            void Created() => {|MNL108:new OrderRef()|}.Delete(_a);
            void Untyped() => _a.DeleteRef({|MNL108:default(RecordRef)|});
            void Local() { OrderRef o = default; {|MNL108:o|}.Price = 1; }
            void Deleted() { var o = new OrderRef(); {|MNL108:o|}.Delete(_a); }
            void SomePath(bool c) { OrderRef o = default; if (c) o = OrderRef.New(_a); {|MNL108:o|}.Price = 2; }
            void InLoop(int n) { OrderRef o = default; for (int i = 0; i < n; i++) { {|MNL108:o|}.Price = i; } }
            void AfterTry() { OrderRef o = default; try { Console.WriteLine(); } finally { } {|MNL108:o|}.Price = 3; }
            void InSwitch(int k) { OrderRef o = default; switch (k) { case 1: o = OrderRef.New(_a); break; } {|MNL108:o|}.Price = k; }
            Action InLambda() => () => { OrderRef o = default; {|MNL108:o|}.Price = 4; };
            void InLocalFunction() { Go(); void Go() { RecordRef h = default; _a.DeleteRef({|MNL108:h|}); } }
        }
        """);

    [Fact]
    public Task Mnl108_leaves_assigned_tested_and_correlated_handles_alone() => Verify.Analyzer(Handle + """
        class C
        {
            readonly TypeAllocator _a = new();
            void Assigned() { OrderRef o = default; o = OrderRef.New(_a); o.Price = 1; }
            void Both(bool c) { OrderRef o = default; if (c) o = OrderRef.New(_a); else o = OrderRef.New(_a); o.Price = 1; }
            void Tested(bool c) { OrderRef o = default; if (c) o = OrderRef.New(_a); if (!o.IsAllocated) return; o.Price = 1; }
            void Compared(bool c) { OrderRef o = default; if (c) o = OrderRef.New(_a); if (o.Equals(default(OrderRef))) return; o.Price = 1; }
            void Flag(bool c) { OrderRef o = default; bool made = false; if (c) { o = OrderRef.New(_a); made = true; } if (made) o.Price = 1; }
            void Cleanup()
            {
                OrderRef o = default;
                try { o = OrderRef.New(_a); o.Price = 1; }
                catch { if (o.IsAllocated) o.Delete(_a); throw; }
            }
            void Out(Dictionary<int, OrderRef> d) { OrderRef o = default; if (d.TryGetValue(1, out o)) o.Price = 1; }
            bool Checks() => default(OrderRef).IsAllocated;
            void Loop(int n) { OrderRef o = default; for (int i = 0; i < n; i++) o = OrderRef.New(_a); }
            void Parameter(OrderRef o) => o.Price = 1;
            void Lambda() { OrderRef o = default; Action set = () => o = OrderRef.New(_a); set(); o.Price = 1; }
        }
        """);

    private const string Records = """
        [NativeRecord] public interface IRow { int Id { get; set; } }

        """;

    [Fact]
    public Task Mnl109_flags_a_moving_view_kept_beyond_its_move() => Verify.Analyzer(Records + """
        class C
        {
            IRow? _last;
            readonly List<IRow> _rows = new();
            void Field(RecordArray<IRow> a) { {|MNL109:_last = a.MoveTo(0)|}; }
            void FieldFromScan(RecordArray<IRow> a) { foreach (var r in a.Scan()) if (r.Id > 0) {|MNL109:_last = r|}; }
            void Added(RecordArray<IRow> a) { foreach (var r in a.Scan()) _rows.Add({|MNL109:r|}); }
            void AddedView(RecordArray<IRow> a, int n) { for (int i = 0; i < n; i++) _rows.Add({|MNL109:a.MoveTo(i)|}); }
            void ValueAdded(RecordView<IRow> v) { _rows.Add({|MNL109:v.Value|}); }
            int Outer(RecordArray<IRow> a)
            {
                IRow? best = null;
                foreach (var r in a.Scan()) if (best == null || r.Id > best.Id) {|MNL109:best = r|};
                return best?.Id ?? 0;
            }
            int OuterMoveTo(RecordArray<IRow> a)
            {
                IRow? best = null;
                for (int i = 0; i < a.Length; i++)
                {
                    var r = a.MoveTo(i);
                    if (best == null || r.Id > best.Id) {|MNL109:best = r|};
                }
                return best?.Id ?? 0;
            }
            IRow Returned(RecordArray<IRow> a, int id)
            {
                var row = a.MoveTo(id);
                row.Id = id;
                return {|MNL109:row|};
            }
            IRow? ReturnedFromScan(RecordArray<IRow> a, int id)
            {
                foreach (var r in a.Scan()) if (r.Id == id) return {|MNL109:r|};
                return null;
            }
            Func<int> Captured(RecordArray<IRow> a) { var r = a.MoveTo(0); return () => {|MNL109:r|}.Id; }
            Task OnAnotherThread(RecordArray<IRow> a) { var r = a.View; return Task.Run(() => {|MNL109:r|}.Id = 1); }
            int TwoMoves(RecordArray<IRow> a) { var first = a.MoveTo(0); var second = a.MoveTo(1); return {|MNL109:first|}.Id + second.Id; }
            int AfterScan(RecordArray<IRow> a) { var v = a.View; int s = 0; foreach (var r in a.Scan()) s += r.Id; return s + {|MNL109:v|}.Id; }
            int OwnView(RecordView<IRow> c) { var v = c.MoveTo(0); c.MoveTo(1); return {|MNL109:v|}.Id; }
        }
        """);

    [Fact]
    public Task Mnl109_leaves_a_view_used_where_it_is_positioned_alone() => Verify.Analyzer(Records + """
        class C
        {
            readonly List<IRow> _rows = new();
            readonly List<int> _ids = new();
            int Sum(RecordArray<IRow> a) { int s = 0; foreach (var r in a.Scan()) s += r.Id; return s; }
            void Items(RecordArray<IRow> a) { foreach (var r in a) _rows.Add(r); for (int i = 0; i < a.Length; i++) _rows.Add(a[i]); }
            void Ids(RecordArray<IRow> a) { foreach (var r in a.Scan()) _ids.Add(r.Id); }
            IRow At(RecordArray<IRow> a, int i) => a.MoveTo(i);
            int Find(RecordArray<IRow> a, int id)
            {
                IRow? found = null;
                foreach (var r in a.Scan()) { if (r.Id == id) { found = r; break; } }
                return found?.Id ?? -1;
            }
            bool Any(RecordArray<IRow> a) { foreach (var r in a.Scan()) if (Check(r)) return true; return false; }
            static bool Check(IRow r) => r.Id > 0;
            int Linq(RecordArray<IRow> a) { var v = a.MoveTo(0); return _ids.FindIndex(x => x == v.Id); }
            RecordView<IRow> Cursor(RecordArray<IRow> a) => a.CreateView();
            void Local(RecordArray<IRow> a) { var v = a.MoveTo(1); v.Id = 2; Console.WriteLine(v.Id); }
            int Conditional(RecordArray<IRow> a, bool c) { var first = a.MoveTo(0); if (c) a.MoveTo(1).Id = 2; return first.Id; }
            int ReadBefore(RecordArray<IRow> a) { var first = a.MoveTo(0); int x = first.Id; var second = a.MoveTo(1); return x + second.Id; }
            int TwoArrays(RecordArray<IRow> a, RecordArray<IRow> b) { var x = a.MoveTo(0); var y = b.MoveTo(0); return x.Id + y.Id; }
            int Repositioned(RecordArray<IRow> a) { var v = a.MoveTo(0); a.MoveTo(1); v = a.MoveTo(2); return v.Id; }
            int OtherCursor(RecordArray<IRow> a, RecordView<IRow> c) { var v = a.MoveTo(0); c.MoveTo(1); return v.Id; }
        }
        """);

    private const string Worker = """
        sealed class Worker
        {
            private readonly TypeAllocator.ThreadHeap _heap;
            public Worker(TypeAllocator.ThreadHeap heap) { {|MNL107:_heap = heap|}; }
        }
        sealed class Borrower
        {
            public int Id(TypeAllocator.ThreadHeap heap) => heap.ThreadId;
            [ThreadStatic] private static TypeAllocator.ThreadHeap? t_heap;
            public void Cache(TypeAllocator.ThreadHeap heap) => t_heap = heap;
        }
        sealed class Holder(TypeAllocator.ThreadHeap heap) { public int Id => heap.ThreadId; }
        sealed record Pair(TypeAllocator.ThreadHeap Heap, int N);
        sealed class Setter { public TypeAllocator.ThreadHeap? Heap { get; set; } public void Keep(TypeAllocator.ThreadHeap heap) { {|MNL107:this.Heap = heap ?? throw new ArgumentNullException()|}; } }

        """;

    [Fact]
    public Task Mnl107_flags_a_held_heap_handed_to_code_that_keeps_it() => Verify.Analyzer(Worker + """
        class C
        {
            readonly TypeAllocator _a = new();
            object Ctor() { var heap = _a.GetThreadHeap(); return new Worker({|MNL107:heap|}); }
            object Primary() => new Holder({|MNL107:_a.GetThreadHeap()|});
            object Positional() { var heap = _a.GetThreadHeap(); return new Pair({|MNL107:heap|}, 1); }
            void Method(Setter s) { var heap = _a.GetThreadHeap(); s.Keep({|MNL107:heap|}); }
        }
        """);

    [Fact]
    public Task Mnl107_leaves_a_heap_passed_to_code_that_only_uses_it_alone() => Verify.Analyzer(Worker + """
        class C
        {
            readonly TypeAllocator _a = new();
            int Borrow(Borrower b) { var heap = _a.GetThreadHeap(); b.Cache(heap); return b.Id(heap); }
            void Framework(List<TypeAllocator.ThreadHeap> seen) { var heap = _a.GetThreadHeap(); Console.WriteLine(heap); }
        }
        """);
}
