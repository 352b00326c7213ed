using Manaloc.Analyzers.CodeFixes;

namespace Manaloc.Analyzers.Tests;

public sealed class CodeFixTests
{
    [Fact]
    public Task A_discarded_scope_becomes_a_using_declaration() => Verify.CodeFix<AddUsingCodeFix>("""
        class C
        {
            readonly SlimReaderWriterLock _rw = new();
            int _v;
            void M()
            {
                {|MNL106:_rw.EnterWriteScope()|};
                _v++;
            }
        }
        """, """
        class C
        {
            readonly SlimReaderWriterLock _rw = new();
            int _v;
            void M()
            {
                using var scope = _rw.EnterWriteScope();
                _v++;
            }
        }
        """);

    [Fact]
    public Task An_undisposed_scope_local_gets_using() => Verify.CodeFix<AddUsingCodeFix>("""
        class C
        {
            readonly SlimReaderWriterLock _rw = new();
            int _v;
            void M()
            {
                var {|MNL106:s = _rw.EnterReadScope()|};
                _v++;
            }
        }
        """, """
        class C
        {
            readonly SlimReaderWriterLock _rw = new();
            int _v;
            void M()
            {
                using var s = _rw.EnterReadScope();
                _v++;
            }
        }
        """);

    [Fact]
    public Task A_return_after_throwing_code_moves_into_finally() => Verify.CodeFix<MoveReleaseIntoFinallyCodeFix>("""
        class C
        {
            void M(System.IO.Stream s, int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                s.Write(a, 0, n);
                s.Flush();
                {|MNL111:ArrayPool<byte>.Shared.Return(a)|};
            }
        }
        """, """
        class C
        {
            void M(System.IO.Stream s, int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                try
                {
                    s.Write(a, 0, n);
                    s.Flush();
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(a);
                }
            }
        }
        """);

    [Fact]
    public Task A_view_read_after_an_await_reads_through_the_indexer() => Verify.CodeFix<ReadThroughIndexerCodeFix>("""
        [NativeRecord] public interface IRow { int Id { get; set; } }
        class C
        {
            readonly RecordArray<IRow> _rows = null!;
            async Task<int> M(int i) { var r = _rows.MoveTo(i); await Task.Yield(); return {|MNL112:r|}.Id; }
        }
        """, """
        [NativeRecord] public interface IRow { int Id { get; set; } }
        class C
        {
            readonly RecordArray<IRow> _rows = null!;
            async Task<int> M(int i) { var r = _rows[i]; await Task.Yield(); return r.Id; }
        }
        """);
}
