namespace Manaloc.Lab.Tests;

/// <summary>A fact that only means something on Linux: elsewhere it is reported as skipped, never passed in silence.</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class LinuxFactAttribute : FactAttribute
{
    /// <summary>Skips the test with a reason on every other operating system.</summary>
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only: it reads what only Linux reports.";
    }
}
