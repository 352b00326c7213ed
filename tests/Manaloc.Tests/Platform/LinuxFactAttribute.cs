namespace Manaloc.Tests.Platform;

/// <summary>A fact about Linux system calls: reported as skipped, with the reason, on any other operating system.</summary>
/// <remarks>xunit 2 decides a skip when it discovers the test, so the attribute sets <see cref="FactAttribute.Skip"/> itself.</remarks>
public sealed class LinuxFactAttribute : FactAttribute
{
    /// <summary>Skips the test unless it runs on Linux.</summary>
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only: it checks Linux system calls (affinity, mappings).";
    }
}
