namespace Manaloc.Analyzers.Tests;

public sealed class SmokeTests
{
    [Fact]
    public Task Rent_without_return_is_flagged() => Verify.Analyzer("""
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
    public Task Rent_try_finally_is_clean() => Verify.Analyzer("""
        class C
        {
            void M(int n)
            {
                byte[] a = ArrayPool<byte>.Shared.Rent(n);
                try { Work(a); }
                finally { ArrayPool<byte>.Shared.Return(a); }
            }
            static void Work(byte[] a) { }
        }
        """);
}
