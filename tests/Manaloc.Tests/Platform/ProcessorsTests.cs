using System.Runtime.InteropServices;
using Manaloc.Platform;

namespace Manaloc.Tests.Platform;

public sealed class ProcessorsTests
{
    private static readonly byte[] FourProcessors = [0b0000_1111];

    private static Processors ReadFrom(SyntheticRoot root, byte[]? mask = null, int environmentCount = 8, Architecture architecture = Architecture.X64)
        => Processors.Read(new ProcessorProbe(root.Path, environmentCount, mask ?? FourProcessors, null, architecture));

    [Fact]
    public void V2_quota_becomes_an_effective_count_below_the_affinity()
    {
        using var root = new SyntheticRoot().CgroupV2("/app").Write("sys/fs/cgroup/app/cpu.max", "150000 100000\n");
        var p = ReadFrom(root);
        Assert.Equal(1.5, p.CpuQuota);
        Assert.Equal(2, p.QuotaCount);
        Assert.Equal(4, p.AffinityCount);
        Assert.Equal(2, p.AvailableCount);
        Assert.Equal("v2", p.CgroupVersion);
        Assert.EndsWith(System.IO.Path.Combine("app", "cpu.max"), p.CpuQuotaSource);
        Assert.Empty(p.Problems);
    }

    [Theory]
    [InlineData("max 100000\n")]
    [InlineData("max\n")]
    public void V2_max_means_no_limit(string content)
    {
        using var root = new SyntheticRoot().CgroupV2("/app").Write("sys/fs/cgroup/app/cpu.max", content);
        var p = ReadFrom(root);
        Assert.Null(p.CpuQuota);
        Assert.Null(p.QuotaCount);
        Assert.Equal(4, p.AvailableCount);
        Assert.Empty(p.Problems);
    }

    [Theory]
    [InlineData("lots of cpu\n")]
    [InlineData("50000\n")]
    [InlineData("-5 100000\n")]
    [InlineData("50000 0\n")]
    [InlineData("")]
    public void V2_garbage_is_reported_not_guessed(string content)
    {
        using var root = new SyntheticRoot().CgroupV2("/app").Write("sys/fs/cgroup/app/cpu.max", content);
        var p = ReadFrom(root);
        Assert.Null(p.CpuQuota);
        Assert.Equal(4, p.AvailableCount);
        var problem = Assert.Single(p.Problems);
        Assert.Contains("cpu.max", problem);
    }

    [Fact]
    public void V2_a_parents_tighter_quota_binds_the_child()
    {
        using var root = new SyntheticRoot().CgroupV2("/slice/app")
            .Write("sys/fs/cgroup/slice/cpu.max", "100000 100000\n")
            .Write("sys/fs/cgroup/slice/app/cpu.max", "max 100000\n");
        var p = ReadFrom(root);
        Assert.Equal(1.0, p.CpuQuota);
        Assert.Equal(1, p.AvailableCount);
        Assert.EndsWith(System.IO.Path.Combine("slice", "cpu.max"), p.CpuQuotaSource);
    }

    [Fact]
    public void V1_quota_in_a_namespaced_mount_is_read_at_the_mount_point()
    {
        using var root = new SyntheticRoot()
            .Write("proc/self/cgroup", "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n")
            .Write("proc/self/mountinfo", "40 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n")
            .Write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n")
            .Write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
        var p = ReadFrom(root);
        Assert.Equal("v1", p.CgroupVersion);
        Assert.Equal(0.5, p.CpuQuota);
        Assert.Equal(1, p.QuotaCount);
        Assert.Equal(1, p.AvailableCount);
        Assert.Empty(p.Problems);
    }

    [Fact]
    public void V1_minus_one_means_no_limit()
    {
        using var root = new SyntheticRoot()
            .Write("proc/self/cgroup", "1:cpu:/\n0::/\n")
            .Write("proc/self/mountinfo", "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
            .Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n")
            .Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
        var p = ReadFrom(root);
        Assert.Equal("v1", p.CgroupVersion);
        Assert.Null(p.CpuQuota);
        Assert.Equal(4, p.AvailableCount);
        Assert.Empty(p.Problems);
    }

    [Theory]
    [InlineData("abc", "100000")]
    [InlineData("50000", "soon")]
    [InlineData("50000", null)]
    [InlineData("-7", "100000")]
    public void V1_garbage_or_a_missing_period_is_reported(string quota, string? period)
    {
        using var root = new SyntheticRoot().Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", quota);
        if (period is not null) root.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", period);
        var p = ReadFrom(root);
        Assert.Null(p.CpuQuota);
        Assert.Equal(4, p.AvailableCount);
        Assert.Contains(p.Problems, text => text.Contains("cpu.cfs_quota_us", StringComparison.Ordinal));
    }

    [Fact]
    public void V1_is_found_without_proc_files()
    {
        using var root = new SyntheticRoot()
            .Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "200000")
            .Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000");
        var p = ReadFrom(root, mask: [0xFF]);
        Assert.Equal(2.0, p.CpuQuota);
        Assert.Equal(2, p.AvailableCount);
    }

    [Fact]
    public void Missing_files_mean_no_limit_and_no_problem()
    {
        using var root = new SyntheticRoot();
        var p = ReadFrom(root, environmentCount: 6);
        Assert.Null(p.CpuQuota);
        Assert.Null(p.CgroupVersion);
        Assert.Null(p.InstalledCount);
        Assert.Equal(6, p.EnvironmentProcessorCount);
        Assert.Equal(4, p.AvailableCount);
        Assert.Equal(64, p.CacheLineSize);
        Assert.False(p.CacheLineSizeReported);
        Assert.Empty(p.Problems);
    }

    [Fact]
    public void An_unreadable_quota_file_means_no_limit_not_an_exception()
    {
        // A directory where the file should be: reading it fails with an I/O error even as root.
        using var root = new SyntheticRoot().CgroupV2("/app").Directory_("sys/fs/cgroup/app/cpu.max");
        var p = ReadFrom(root);
        Assert.Null(p.CpuQuota);
        Assert.Empty(p.Problems);
    }

    [Fact]
    public void A_cgroup_path_outside_the_mount_root_is_reported_and_the_mount_point_read()
    {
        using var root = new SyntheticRoot()
            .Write("proc/self/cgroup", "0::/elsewhere\n")
            .Write("proc/self/mountinfo", "30 25 0:26 /mine /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
            .Write("sys/fs/cgroup/cpu.max", "300000 100000");
        var p = ReadFrom(root);
        Assert.Equal(3.0, p.CpuQuota);
        Assert.Contains(p.Problems, text => text.Contains("outside", StringComparison.Ordinal));
    }

    [Fact]
    public void Mountinfo_octal_escapes_are_decoded()
    {
        using var root = new SyntheticRoot()
            .Write("proc/self/cgroup", "0::/\n")
            .Write("proc/self/mountinfo", "30 25 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n")
            .Write("sys/fs/my cgroup/cpu.max", "100000 50000");
        var p = ReadFrom(root);
        Assert.Equal(2.0, p.CpuQuota);
    }

    [Fact]
    public void Affinity_mask_bits_are_processor_numbers()
    {
        using var root = new SyntheticRoot();
        var p = ReadFrom(root, mask: [0b0000_0101, 0b1000_0000, 0, 0]);
        Assert.Equal([0, 2, 15], p.AffinityProcessors);
        Assert.Equal(3, p.AffinityCount);
        Assert.Equal(3, p.AvailableCount);
    }

    [Fact]
    public void An_empty_or_unreadable_mask_falls_back_to_the_runtime_count_and_says_so()
    {
        using var root = new SyntheticRoot();
        var empty = ReadFrom(root, mask: [0, 0], environmentCount: 5);
        Assert.Null(empty.AffinityCount);
        Assert.Equal(5, empty.AvailableCount);
        Assert.Single(empty.Problems);

        var failed = Processors.Read(new ProcessorProbe(root.Path, 3, null, "sched_getaffinity failed (errno 1)", Architecture.X64));
        Assert.Null(failed.AffinityProcessors);
        Assert.Equal(3, failed.AvailableCount);
        Assert.Contains("errno 1", Assert.Single(failed.Problems));
    }

    [Fact]
    public void Installed_count_comes_from_the_online_list()
    {
        using var root = new SyntheticRoot().Write("sys/devices/system/cpu/online", "0-3,6\n");
        Assert.Equal(5, ReadFrom(root).InstalledCount);
        root.Write("sys/devices/system/cpu/online", "zero to three\n");
        var bad = ReadFrom(root);
        Assert.Null(bad.InstalledCount);
        Assert.Contains("online", Assert.Single(bad.Problems));
    }

    [Fact]
    public void Cache_line_size_is_the_largest_reported_and_padding_follows_the_architecture()
    {
        using var root = new SyntheticRoot()
            .Write("sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size", "64\n")
            .Write("sys/devices/system/cpu/cpu0/cache/index1/coherency_line_size", "64\n")
            .Write("sys/devices/system/cpu/cpu0/cache/index2/coherency_line_size", "128\n");
        var x64 = ReadFrom(root);
        Assert.Equal(128, x64.CacheLineSize);
        Assert.True(x64.CacheLineSizeReported);
        Assert.Equal(128, x64.FalseSharingPadding);

        using var small = new SyntheticRoot().Write("sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size", "64\n");
        Assert.Equal(128, ReadFrom(small, architecture: Architecture.X64).FalseSharingPadding);
        Assert.Equal(64, ReadFrom(small, architecture: Architecture.Arm).FalseSharingPadding);
    }

    [Fact]
    public void A_garbage_cache_line_size_is_reported_and_the_default_used()
    {
        using var root = new SyntheticRoot().Write("sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size", "sixty-four\n");
        var p = ReadFrom(root);
        Assert.Equal(64, p.CacheLineSize);
        Assert.False(p.CacheLineSizeReported);
        Assert.Contains("coherency_line_size", Assert.Single(p.Problems));
    }

    [Fact]
    public void The_real_reading_never_throws_and_agrees_with_the_process_mask()
    {
        var p = Processors.Read();
        Assert.True(p.AvailableCount >= 1);
        Assert.Equal(Environment.ProcessorCount, p.EnvironmentProcessorCount);
        Assert.Same(Processors.Current, Processors.Current);
        Assert.False(string.IsNullOrEmpty(p.ToString()));
        if (OperatingSystem.IsLinux() && p.AffinityProcessors is { } cpus && cpus[^1] < 64)
        {
            ulong expected = (ulong)(long)System.Diagnostics.Process.GetCurrentProcess().ProcessorAffinity;
            Assert.Equal(System.Numerics.BitOperations.PopCount(expected), p.AffinityCount);
        }
    }

    [LinuxFact]
    public void A_thread_pinned_to_one_processor_sees_its_own_mask_while_the_process_reading_stays()
    {
        var process = Processors.Read();
        int first = process.AffinityProcessors![0];
        Processors? seen = null;
        byte[]? threadMask = null;
        int error = -1;
        var thread = new Thread(() =>
        {
            error = LinuxNative.PinCurrentThread(first);
            threadMask = LinuxNative.GetAffinity(0, out _);
            seen = Processors.Read();
        });
        thread.Start();
        Assert.True(thread.Join(TimeSpan.FromSeconds(30)), "the reading thread did not finish");
        Assert.Equal(0, error);
        Assert.Equal([first], AffinityMask.ToProcessors(threadMask!));
        // The process figure is the main thread's mask, whichever thread asks.
        Assert.Equal(process.AffinityProcessors, seen!.AffinityProcessors);
        Assert.Equal(Environment.ProcessorCount, seen.EnvironmentProcessorCount);
    }
}
