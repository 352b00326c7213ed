using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>The kernel32 calls behind the Windows reading and a dispatcher worker pinning itself; all unprivileged.</summary>
/// <remarks>Callers check <see cref="OperatingSystem.IsWindows"/> first. Stateless, thread-safe.</remarks>
internal static unsafe partial class WindowsNative
{
    /// <summary>GetActiveProcessorCount's "every group" argument.</summary>
    public const ushort AllProcessorGroups = 0xFFFF;

    /// <summary>LOGICAL_PROCESSOR_RELATIONSHIP.RelationCache.</summary>
    public const int RelationCache = 2;

    /// <summary>The pseudo handle GetCurrentProcess returns.</summary>
    public static readonly nint CurrentProcess = -1;

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetProcessAffinityMask(nint process, out nuint processMask, out nuint systemMask);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetProcessGroupAffinity(nint process, ref ushort groupCount, ushort* groups);

    [LibraryImport("kernel32.dll")]
    public static partial uint GetActiveProcessorCount(ushort group);

    /// <summary>Sets a thread's mask within its current processor group (processors 0-63); 0 on failure.</summary>
    [LibraryImport("kernel32.dll")]
    public static partial nuint SetThreadAffinityMask(nint thread, nuint mask);

    /// <summary>The pseudo handle of the calling thread.</summary>
    [LibraryImport("kernel32.dll")]
    public static partial nint GetCurrentThread();

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetLogicalProcessorInformation(LogicalProcessorInformation* buffer, ref uint length);

    /// <summary>SYSTEM_LOGICAL_PROCESSOR_INFORMATION: a mask, a relationship and a 16-byte union.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct LogicalProcessorInformation
    {
        public nuint ProcessorMask;
        public int Relationship;
        public CacheDescriptor Cache;
    }

    /// <summary>CACHE_DESCRIPTOR inside the union (8-byte aligned, as the union holds ULONGLONGs).</summary>
    [StructLayout(LayoutKind.Explicit, Size = 16)]
    public struct CacheDescriptor
    {
        [FieldOffset(0)] public byte Level;
        [FieldOffset(1)] public byte Associativity;
        [FieldOffset(2)] public ushort LineSize;
        [FieldOffset(4)] public uint Size;
        [FieldOffset(8)] public int Type;
        [FieldOffset(8)] public ulong AlignmentOnly;
    }
}
