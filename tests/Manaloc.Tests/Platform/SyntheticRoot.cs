namespace Manaloc.Tests.Platform;

/// <summary>A temporary directory standing in for <c>/</c>: tests write the proc and sys files they need.</summary>
internal sealed class SyntheticRoot : IDisposable
{
    public SyntheticRoot()
    {
        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "manaloc-root-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(Path);
    }

    public string Path { get; }

    public SyntheticRoot Write(string relativePath, string content)
    {
        string full = System.IO.Path.Combine(Path, relativePath);
        Directory.CreateDirectory(System.IO.Path.GetDirectoryName(full)!);
        File.WriteAllText(full, content);
        return this;
    }

    public SyntheticRoot Directory_(string relativePath)
    {
        Directory.CreateDirectory(System.IO.Path.Combine(Path, relativePath));
        return this;
    }

    /// <summary>A cgroup v2 system: the process in <paramref name="cgroupPath"/>, the unified hierarchy at /sys/fs/cgroup.</summary>
    public SyntheticRoot CgroupV2(string cgroupPath)
        => Write("proc/self/cgroup", $"0::{cgroupPath}\n")
            .Write("proc/self/mountinfo", "25 1 0:22 / / rw - ext4 /dev/sda1 rw\n30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
            .Write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");

    public void Dispose()
    {
        try { Directory.Delete(Path, recursive: true); } catch (IOException) { /* best effort */ }
    }
}
