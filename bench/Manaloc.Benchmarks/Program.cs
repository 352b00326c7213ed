using BenchmarkDotNet.Running;

namespace Manaloc.Benchmarks;

/// <summary>Runs the benchmarks: <c>dotnet run -c Release --project bench/Manaloc.Benchmarks -- --filter '*'</c>.</summary>
public static class Program
{
    /// <summary>Entry point; arguments go to BenchmarkDotNet's switcher.</summary>
    public static void Main(string[] args) => BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
}
