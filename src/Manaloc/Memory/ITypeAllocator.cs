using System.Diagnostics.CodeAnalysis;

namespace Manaloc.Memory;

/// <summary>
/// Typed objects in native memory: <see cref="New{T}"/> returns an implementation of an interface of
/// properties whose values live outside the GC heap; <see cref="Delete{T}(T)"/> frees it.
/// </summary>
/// <remarks>
/// The design of "Writing a Manual Memory Manager in C#". Implementations use the compile-time
/// implementation of a <see cref="NativeRecordAttribute"/> interface and generate the others at run time, hence
/// the trimming and AOT annotations of New, PreGenerate and GetLayout (the source generator intercepts calls on
/// <see cref="TypeAllocator"/> whose type is a [NativeRecord] interface, so those do not warn; calls through this
/// interface always do). Thread safety: implementations are expected to be
/// safe from any thread, including Delete on another thread than New.
/// </remarks>
public interface ITypeAllocator
{
    /// <summary>Allocates a zeroed record of interface <typeparamref name="T"/>.</summary>
    /// <typeparam name="T">A public interface whose members are properties of unmanaged value types.</typeparam>
    /// <returns>A managed handle whose properties read and write the native record.</returns>
    /// <remarks>Interfaces marked <see cref="NativeRecordAttribute"/> use their compile-time implementation (NativeAOT
    /// included); others are generated at run time where dynamic code is supported.</remarks>
    [RequiresDynamicCode(RecordTypes.EmitsCodeMessage)]
    [RequiresUnreferencedCode(RecordTypes.ReadsInterfaceMessage)]
    T New<T>() where T : class;

    /// <summary>Frees a record from <see cref="New{T}"/>; the handle is invalid afterwards (with <see cref="TypeAllocatorOptions.RecycleHandles"/> a later New may hand the same handle out again).</summary>
    /// <param name="instance">The record to free.</param>
    void Delete<T>(T instance) where T : class;

    /// <summary>Generates the implementations of <paramref name="types"/> now, so that a later New never waits on code generation.</summary>
    /// <param name="types">Interfaces to prepare.</param>
    [RequiresDynamicCode(RecordTypes.EmitsCodeMessage)]
    [RequiresUnreferencedCode(RecordTypes.ReadsInterfaceMessage)]
    void PreGenerate(params Type[] types);

    /// <summary>The native layout of interface <paramref name="type"/>.</summary>
    /// <param name="type">An interface.</param>
    [RequiresUnreferencedCode("Reads the interface's properties through reflection.")]
    TypeLayout GetLayout(Type type);
}
