using Manaloc.Memory;

namespace AotSample;

/// <summary>
/// Compiled only with <c>-p:AotSampleUnmarkedCall=true</c> (CI's negative check): calls that need Reflection.Emit, which
/// must warn at build and publish (IL2026 and IL3050), where the same calls with a [NativeRecord] interface do not.
/// </summary>
public static class UnmarkedCall
{
    /// <summary>An interface without [NativeRecord]: the general path.</summary>
    public static IUnmarked NewUnmarked(TypeAllocator allocator) => allocator.New<IUnmarked>();

    /// <summary>T unknown at compile time: it may be any interface, so this warns too.</summary>
    public static T NewAny<T>(TypeAllocator allocator) where T : class => allocator.New<T>();
}
