using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Testing;

namespace Manaloc.Analyzers.Tests;

/// <summary>
/// Who owns a pooled resource: a writer, a stream or a record array never disposed, a resource handed to a method that
/// only borrows it, a release written only in a catch, memory that outlives its owner, a shared array's view in
/// concurrent code. Each shape through if/else, a loop, try/catch, an early return, a switch, a local function and a
/// lambda, and the correct forms beside it.
/// </summary>
public sealed class OwnershipRuleTests
{
    [Fact]
    public Task Mnl103_flags_a_pooled_writer_or_stream_never_disposed_or_used_after_dispose() => Verify.Analyzer("""
        class C
        {
            readonly BufferManager _m = new();
            void IfElse(bool c) { var {|MNL103:w = new PooledBufferWriter(_m)|}; if (c) w.Dispose(); else w.Advance(0); }
            void Loop(int n) { for (int i = 0; i < n; i++) { var {|MNL103:s = new PooledBufferStream(_m)|}; s.Position = i; if (i == 2) continue; s.Dispose(); } }
            void Try(System.IO.Stream t) { var {|MNL103:w = new PooledBufferWriter(_m)|}; try { w.CopyTo(t); } catch (System.IO.IOException) { w.Dispose(); throw; } }
            long Early(bool c) { var w = new PooledBufferWriter(_m); w.Dispose(); if (c) return 0; return {|MNL103:w|}.WrittenCount; }
            void Switch(int k) { var {|MNL103:w = new PooledBufferWriter(_m)|}; switch (k) { case 0: w.Dispose(); break; case 1: w.Advance(0); break; } }
            void Local() { Go(); void Go() { var {|MNL103:s = new PooledBufferStream(_m)|}; s.WriteByte(1); } }
            Action Lambda() => () => { var {|MNL103:w = new PooledBufferWriter(_m)|}; w.Advance(0); };
            void Dropped() { {|MNL103:new PooledBufferWriter(_m)|}; }
            void Fine() { using var w = new PooledBufferWriter(_m); w.Advance(0); }
            async Task FineAsync(System.IO.Stream t) { await using var s = new PooledBufferStream(_m); s.WriteByte(1); await s.FlushAsync(); }
            PooledBufferWriter Handed() { var w = new PooledBufferWriter(_m); w.Advance(0); return w; }
            System.IO.StreamReader Wrapped() { var s = new PooledBufferStream(_m); return new System.IO.StreamReader(s); }
        }
        """);

    private const string NativeCollections = """
        namespace Manaloc.Collections
        {
            // Stand-ins for the native collections, which the rules know by metadata name.
            public sealed class NativeMap<TKey, TValue> : IDisposable { public int Count => 0; public void Dispose() { } }
            public sealed class ConcurrentNativeMap<TKey, TValue> : IDisposable { public int Count => 0; public void Dispose() { } }
        }
        [NativeRecord] public interface IRec { int X { get; set; } }

        """;

    [Fact]
    public Task Mnl106_flags_a_record_array_or_an_owning_manaloc_type_never_disposed() => Verify.Analyzer(NativeCollections + """
        class C
        {
            readonly TypeAllocator _a = new();
            void IfElse(int n, bool c) { var {|MNL106:arr = _a.NewArray<IRec>(n)|}; if (c) arr.Dispose(); else arr[0].X = 1; }
            void Loop(int n) { for (int i = 0; i < n; i++) { var {|MNL106:map = new Manaloc.Collections.NativeMap<int, int>()|}; if (map.Count == i) break; map.Dispose(); } }
            void Try() { var {|MNL106:m = new Manaloc.Collections.ConcurrentNativeMap<int, int>()|}; try { Console.WriteLine(m.Count); } catch (InvalidOperationException) { m.Dispose(); throw; } }
            int Early(int n) { var {|MNL106:arr = _a.NewArray<IRec>(n)|}; if (n > 4) return arr.Length; arr.Dispose(); return 0; }
            void Switch(int k) { var {|MNL106:t = new TypeAllocator()|}; switch (k) { case 0: t.Dispose(); break; default: Console.WriteLine(t); break; } }
            void Local() { Go(); void Go() { var {|MNL106:p = new BufferMemoryPool()|}; Console.WriteLine(p.MaxBufferSize); } }
            Action Lambda(int n) => () => { var {|MNL106:arr = _a.NewArray<IRec>(n)|}; arr[0].X = 1; };
            void Fine(int n) { using var arr = _a.NewArray<IRec>(n); using var map = new Manaloc.Collections.NativeMap<int, int>(); arr[0].X = map.Count; }
            RecordArray<IRec> Returned(int n) => _a.NewArray<IRec>(n);
            [ThreadStatic] static RecordArray<IRec>? t_cached;
            RecordArray<IRec> Cached(int n) => t_cached ??= _a.NewArray<IRec>(n);
            int FromCache(int n) { var arr = Cached(n); return arr.Length; }
            static void Expect(Func<object> create) { }
            void Thrown() => Expect(() => new Manaloc.Collections.NativeMap<int, int>());
            void ThrownFromBlock() => Expect(() => { return new TypeAllocator(); });
        }
        """);

    [Fact]
    public Task Mnl101_flags_an_array_passed_to_a_method_that_only_borrows_it_or_returned_only_in_a_catch() => Verify.Analyzer("""
        sealed class Keeper { byte[]? _kept; public void Hold(byte[] a) => _kept = a; public int Length => _kept?.Length ?? 0; }
        class C
        {
            static int Use(byte[] a) => a[0];
            static void GiveBack(byte[] a) => ArrayPool<byte>.Shared.Return(a);
            static byte[] Echo(byte[] a) => a;
            void IfElse(bool c) { byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(8)|}; if (c) Use(a); else a[0] = 1; }
            void Loop(System.IO.Stream s) { for (int i = 0; i < 3; i++) { byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(8)|}; s.Read(a, 0, 8); } }
            void Try(System.IO.Stream s) { byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(8)|}; try { s.Read(a, 0, 8); } catch { ArrayPool<byte>.Shared.Return(a); throw; } }
            int Early(bool c) { byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(8)|}; if (c) return Use(a); ArrayPool<byte>.Shared.Return(a); return 0; }
            void Switch(int k, System.IO.Stream s) { byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(8)|}; switch (k) { case 0: s.Write(a, 0, 1); break; default: GiveBack(a); break; } }
            void Local() { Go(); static void Go() { byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(8)|}; Use(a); } }
            Action Lambda(System.IO.Stream s) => () => { byte[] {|MNL101:a = ArrayPool<byte>.Shared.Rent(8)|}; s.Write(a, 0, 8); };
            void Followed() { byte[] a = ArrayPool<byte>.Shared.Rent(8); a[0] = 1; GiveBack(a); }
            void Kept(Keeper k) { byte[] a = ArrayPool<byte>.Shared.Rent(8); k.Hold(a); }
            object Owned() { byte[] a = ArrayPool<byte>.Shared.Rent(8); return new System.IO.MemoryStream(a); }
            byte[] Through() { byte[] a = ArrayPool<byte>.Shared.Rent(8); return Echo(a); }
            void Added(List<byte[]> list) { byte[] a = ArrayPool<byte>.Shared.Rent(8); list.Add(a); }
        }
        """);

    [Fact]
    public Task Mnl103_flags_a_memory_owner_passed_to_a_borrower_and_follows_a_callee_that_disposes_it() => Verify.Analyzer("""
        class C
        {
            readonly BufferMemoryPool _pool = new();
            static int Length(IMemoryOwner<byte> o) => o.Memory.Length;
            static void Done(IMemoryOwner<byte> o) => o.Dispose();
            int Borrowed() { IMemoryOwner<byte> {|MNL103:o = _pool.Rent(8)|}; return Length(o); }
            void Followed() { IMemoryOwner<byte> o = _pool.Rent(8); o.Memory.Span.Clear(); Done(o); }
            int UsedAfter() { IMemoryOwner<byte> o = _pool.Rent(8); Done(o); return {|MNL103:o|}.Memory.Length; }
        }
        """);

    private const string HeldHeap = """
        public readonly struct OrderRef
        {
            public static OrderRef New(TypeAllocator.ThreadHeap heap) => default;
            public void Delete(TypeAllocator.ThreadHeap heap) { }
        }

        """;

    [Fact]
    public Task Mnl107_flags_every_use_of_a_held_heap_after_an_await() => Verify.Analyzer(HeldHeap + """
        class C
        {
            readonly TypeAllocator _a = new();
            async Task All(RecordRef h)
            {
                var heap = _a.GetThreadHeap();
                await Task.Yield();
                var o = OrderRef.New({|MNL107:heap|});
                {|MNL107:heap|}.Delete(h);
                o.Delete({|MNL107:heap|});
            }
            async Task InLoop(int n)
            {
                var heap = _a.GetThreadHeap();
                for (int i = 0; i < n; i++)
                {
                    var o = OrderRef.New({|MNL107:heap|});
                    await Task.Yield();
                    o.Delete({|MNL107:heap|});
                }
            }
            async Task Fine()
            {
                await Task.Yield();
                var heap = _a.GetThreadHeap();
                var o = OrderRef.New(heap);
                o.Delete(heap);
            }
        }
        """);

    [Fact]
    public Task Mnl111_names_a_call_that_can_throw_not_the_calls_that_cannot() => Verify.Analyzer("""
        class C
        {
            void M(System.IO.Stream s, object keep, int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                GC.KeepAlive(keep);
                System.Diagnostics.Debug.Assert(a.Length >= n);
                int at = a.AsSpan(0, n).IndexOf((byte)1);
                s.Write(a, 0, at < 0 ? n : at);
                ArrayPool<byte>.Shared.Return(a);
            }
        }
        """, new DiagnosticResult("MNL111", DiagnosticSeverity.Info).WithSpan(19, 9, 19, 41)
            .WithArguments("a", "is not returned to its pool if 's.Write(a, 0, at < 0 ? n : at)' throws: return it in a finally block"));

    [Fact]
    public Task Mnl101_and_Mnl111_leave_the_shapes_that_cannot_skip_the_return_alone() => Verify.Analyzer("""
        class C
        {
            static string CopyThenDecode(ReadOnlySequence<byte> seq)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(checked((int)seq.Length));
                seq.CopyTo(a);
                string text = System.Text.Encoding.UTF8.GetString(a, 0, (int)seq.Length);
                ArrayPool<byte>.Shared.Return(a);
                return text;
            }
            static bool CopyThenCompare(ReadOnlySpan<byte> source, ReadOnlySpan<byte> expected)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(source.Length);
                source.CopyTo(a);
                bool same = MemoryExtensions.SequenceEqual(a.AsSpan(0, source.Length), expected);
                ArrayPool<byte>.Shared.Return(a);
                return same;
            }
            static int Encode(string s)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(System.Text.Encoding.UTF8.GetMaxByteCount(s.Length));
                int n = System.Text.Encoding.UTF8.GetBytes(s, 0, s.Length, a, 0);
                var h = new HashCode();
                h.AddBytes(a.AsSpan(0, n));
                ArrayPool<byte>.Shared.Return(a);
                return h.ToHashCode();
            }
            static int Decode(ReadOnlySpan<byte> bytes)
            {
                char[] a = ArrayPool<char>.Shared.Rent(System.Text.Encoding.UTF8.GetMaxCharCount(bytes.Length));
                int n = System.Text.Encoding.UTF8.GetChars(bytes, a);
                int hash = string.GetHashCode(a.AsSpan(0, n));
                ArrayPool<char>.Shared.Return(a);
                return hash;
            }
            static int NotSpans(object keep, ReadOnlySpan<byte> needle, int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                System.Diagnostics.Debug.Assert(a.Length >= n);
                int at = a.AsSpan(0, n).IndexOf(needle);
                GC.KeepAlive(keep);
                ArrayPool<byte>.Shared.Return(a);
                return Math.Max(at, 0);
            }
        }
        """);

    private const string AspNetCore = """
        namespace Microsoft.AspNetCore.Http
        {
            public interface IResult { Task ExecuteAsync(object context); }
            public static class Results
            {
                public static IResult Bytes(ReadOnlyMemory<byte> contents) => null!;
            }
        }
        namespace Microsoft.AspNetCore.Routing { public interface IEndpointRouteBuilder { } }
        // In the global namespace, so the test needs no using for the extension (the rule reads the type's name).
        public static class EndpointRouteBuilderExtensions
        {
            public static object MapGet(this Microsoft.AspNetCore.Routing.IEndpointRouteBuilder endpoints, string pattern, Delegate handler) => handler;
        }

        """;

    [Fact]
    public Task Mnl110_flags_a_result_built_from_a_writer_that_using_disposes() => Verify.Analyzer(AspNetCore + """
        class C
        {
            readonly BufferManager _m = new();
            Microsoft.AspNetCore.Http.IResult Handler()
            {
                using var writer = new PooledBufferWriter(_m);
                writer.Advance(0);
                return {|MNL110:Microsoft.AspNetCore.Http.Results.Bytes(writer.WrittenSequence.First)|};
            }
            async Task<Microsoft.AspNetCore.Http.IResult> HandlerAsync()
            {
                using var writer = new PooledBufferWriter(_m);
                await Task.Yield();
                return {|MNL110:Microsoft.AspNetCore.Http.Results.Bytes(writer.WrittenSequence.First)|};
            }
            ReadOnlyMemory<byte> Segment() { using var s = new PooledBufferStream(_m); s.TryGetBuffer(out ArraySegment<byte> seg); return {|MNL110:seg|}; }
            Microsoft.AspNetCore.Http.IResult Copied() { using var writer = new PooledBufferWriter(_m); return Microsoft.AspNetCore.Http.Results.Bytes(writer.ToArray()); }
            byte[] CopiedSequence() { using var writer = new PooledBufferWriter(_m); return writer.WrittenSequence.ToArray(); }
            async Task Written(System.IO.Stream s) { using var writer = new PooledBufferWriter(_m); await s.WriteAsync(writer.WrittenSequence.First); }
            ReadOnlySequence<byte> NotDisposedHere(PooledBufferWriter writer) => writer.WrittenSequence;
        }
        """);

    [Fact]
    public Task Mnl112_is_silent_on_a_shared_arrays_view_moved_from_concurrent_code() => Verify.Analyzer(AspNetCore + """
        [NativeRecord] public interface IRow { int Id { get; set; } }
        class C
        {
            readonly RecordArray<IRow> _rows = null!;
            static RecordArray<IRow> s_rows = null!;
            object Endpoint(Microsoft.AspNetCore.Routing.IEndpointRouteBuilder app) => app.MapGet("/r/{id}", (int id) => _rows.MoveTo(id).Id);
            void Parallel(int n) => System.Threading.Tasks.Parallel.For(0, n, i => Console.WriteLine(s_rows.MoveTo(i).Id));
            async Task<int> Async() { await Task.Yield(); int s = 0; foreach (var r in _rows.Scan()) s += r.Id; return s; }
            Task<int> Run() => Task.Run(() => _rows.View.Id);
            void Captured(RecordArray<IRow> rows, int n) => System.Threading.Tasks.Parallel.For(0, n, i => Console.WriteLine(rows.MoveTo(i).Id));
            void Thread() => new System.Threading.Thread(() => Console.WriteLine(_rows.MoveTo(0).Id)).Start();
            void Pool() => System.Threading.ThreadPool.QueueUserWorkItem(_ => Console.WriteLine(s_rows.MoveTo(1).Id));
            async Task<int> AfterTheAwait(int i) { await Task.Yield(); IRow r = _rows.MoveTo(i); return r.Id; }
            async Task<int> ReadBefore(int i) { IRow r = _rows.MoveTo(i); int id = r.Id; await Task.Yield(); return id; }
            async Task<int> MovedAgain(int i) { IRow r = _rows.MoveTo(i); await Task.Yield(); r = _rows.MoveTo(i); return r.Id; }
            async Task<int> Indexer(int i) { IRow r = _rows[i]; await Task.Yield(); return r.Id; }
            async Task<int> OwnView(int i) { var view = _rows.CreateView(); IRow r = view.MoveTo(i); await Task.Yield(); return r.Id; }
            async Task<int> OnlyOnAnotherPath(int i, bool b) { IRow r = _rows.MoveTo(i); if (b) { await Task.Yield(); return 0; } return r.Id; }
            async Task<int> ItemThenView(int i) { IRow r = _rows[i]; await Task.Yield(); int id = r.Id; r = _rows.MoveTo(i); return id + r.Id; }
            async Task<int> AwaitInALambda(int i) { IRow r = _rows.MoveTo(i); Func<Task> f = async () => await Task.Yield(); int id = r.Id; await f(); return id; }
        }
        """);

    [Fact]
    public Task Mnl112_flags_a_shared_arrays_view_read_after_an_await() => Verify.Analyzer("""
        [NativeRecord] public interface IRow { int Id { get; set; } }
        class C
        {
            readonly RecordArray<IRow> _rows = null!;
            async Task<int> Method(int i) { IRow r = _rows.MoveTo(i); await Task.Yield(); return {|MNL112:r|}.Id; }
            async Task<int> View(int i) { _rows.MoveTo(i); var r = _rows.View; await Task.Delay(1); return {|MNL112:r|}.Id; }
            async Task<int> Scan() { int s = 0; foreach (var r in _rows.Scan()) { await Task.Yield(); s += {|MNL112:r|}.Id; } return s; }
            async Task<int> Parameter(RecordArray<IRow> rows) { var r = rows.MoveTo(0); await Task.Yield(); Console.WriteLine({|MNL112:r|}.Id); return r.Id; }
            Func<int, Task<int>> Lambda() => async i => { var r = _rows.MoveTo(i); await Task.Yield(); return {|MNL112:r|}.Id; };
            async Task<int> Branch(int i, bool b) { var r = _rows.MoveTo(i); if (b) { await Task.Yield(); return {|MNL112:r|}.Id; } return r.Id; }
            async Task<int> ScanGoesOn() { int s = 0; foreach (var r in _rows.Scan()) { s += r.Id; {|MNL112:await Task.Yield()|}; } return s; }
            async Task<int> ScanStops() { foreach (var r in _rows.Scan()) { int id = r.Id; await Task.Yield(); return id; } return 0; }
            async Task<int> OwnScan(RecordView<IRow> view) { int s = 0; foreach (var r in view.Scan()) { s += r.Id; await Task.Yield(); } return s; }
        }
        """);
}
