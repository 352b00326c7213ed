using System.Runtime;
using System.Runtime.InteropServices;

namespace Manaloc.Lab.Harness;

/// <summary>Where the figures come from.</summary>
public sealed record MachineInfo
{
    /// <summary>Operating system description.</summary>
    public required string Os { get; init; }
    /// <summary>Process architecture.</summary>
    public required string Architecture { get; init; }
    /// <summary>.NET runtime description.</summary>
    public required string Runtime { get; init; }
    /// <summary><see cref="Environment.ProcessorCount"/>.</summary>
    public int ProcessorCount { get; init; }
    /// <summary>Processors in this process's affinity mask (where the OS reports one).</summary>
    public int? AffinityProcessors { get; init; }
    /// <summary>The affinity mask in hex (first 64 processors).</summary>
    public string? AffinityMask { get; init; }
    /// <summary><c>server</c> or <c>workstation</c>, and whether concurrent.</summary>
    public required string GcMode { get; init; }
    /// <summary>GC latency mode.</summary>
    public required string GcLatencyMode { get; init; }
    /// <summary>Physical memory the GC sees, in bytes.</summary>
    public long TotalAvailableMemoryBytes { get; init; }
    /// <summary>
    /// The CPUs that are SMT siblings (hyper-threads of one core), from the kernel's topology: "0-1, 2-3", "none" when
    /// every CPU is a core of its own; null when unknown. Two threads on siblings share a core's caches and units.
    /// </summary>
    public string? SmtSiblings { get; init; }
    /// <summary>Whether the process runs in CI (the CI environment variable).</summary>
    public bool Ci { get; init; }
    /// <summary>
    /// True when this process's tiered compilation counts calls from the start (<c>DOTNET_TC_CallCountingDelayMs=0</c>, as
    /// every lab child runs): quick mode's warm-up is 50 ms there and 200 ms elsewhere (<see cref="RunSettings.Quick"/>).
    /// </summary>
    public bool CallsCountedFromStart { get; init; }

    /// <summary>Background (concurrent) GC is on unless the runtime configuration or environment turned it off.</summary>
    private static bool IsConcurrentGc()
    {
        if (Environment.GetEnvironmentVariable("DOTNET_gcConcurrent") is "0") return false;
        return AppContext.GetData("System.GC.Concurrent") is not false && GCSettings.LatencyMode != GCLatencyMode.Batch;
    }

    /// <summary>Reads the current process's machine information.</summary>
    public static MachineInfo Current()
    {
        int? affinityCount = null;
        string? mask = null;
        try
        {
            if (OperatingSystem.IsLinux() || OperatingSystem.IsWindows())
            {
                long affinity = (long)System.Diagnostics.Process.GetCurrentProcess().ProcessorAffinity;
                affinityCount = System.Numerics.BitOperations.PopCount((ulong)affinity);
                mask = $"0x{affinity:x}";
            }
        }
        catch (Exception e) when (e is PlatformNotSupportedException or InvalidOperationException or System.ComponentModel.Win32Exception)
        {
            // No affinity to report on this platform.
        }
        return new MachineInfo
        {
            Os = RuntimeInformation.OSDescription,
            Architecture = RuntimeInformation.ProcessArchitecture.ToString(),
            Runtime = RuntimeInformation.FrameworkDescription,
            ProcessorCount = Environment.ProcessorCount,
            SmtSiblings = CpuTopology.Describe(),
            AffinityProcessors = affinityCount,
            AffinityMask = mask,
            CallsCountedFromStart = RunSettings.CallsCountedFromStart,
            GcMode = (GCSettings.IsServerGC ? "server" : "workstation") + (IsConcurrentGc() ? ", concurrent" : ""),
            GcLatencyMode = GCSettings.LatencyMode.ToString(),
            TotalAvailableMemoryBytes = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes,
            Ci = !string.IsNullOrEmpty(Environment.GetEnvironmentVariable("CI")),
        };
    }
}
