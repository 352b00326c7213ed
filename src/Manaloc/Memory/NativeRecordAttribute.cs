namespace Manaloc.Memory;

/// <summary>
/// Marks a record interface for compile-time generation by the Manaloc source generator (shipped in the
/// Manaloc package as an analyzer): the class implementation <see cref="TypeAllocator.New{T}"/> uses,
/// registered at module load without Reflection.Emit, and two struct handles, <c>XxxRef</c> (checked)
/// and <c>XxxUncheckedRef</c>, for an interface <c>IXxx</c>.
/// </summary>
/// <remarks>
/// Why: the run-time emitter needs dynamic code, which NativeAOT does not have, and its handles are
/// managed objects the GC must mark. A marked interface works under NativeAOT and trimming, and its
/// struct handles (a <see cref="RecordRef"/> or an <see cref="UncheckedRecordRef"/> inside) allocate
/// nothing on the managed heap. The interface must be public, non-generic, and have only properties
/// of unmanaged types; the generator refuses anything else with a diagnostic (MNL001…, see
/// docs/memory.md). The layout is the one <see cref="TypeLayout.Of(Type)"/> computes.
/// Thread safety: attributes are immutable.
/// </remarks>
[AttributeUsage(AttributeTargets.Interface, Inherited = false)]
public sealed class NativeRecordAttribute : Attribute
{
}
