using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

internal static partial class RecordTypes
{
    /// <summary>The reason New, NewArray and PreGenerate give for <see cref="RequiresDynamicCodeAttribute"/> (warning IL3050).</summary>
    public const string EmitsCodeMessage = "An interface not marked [Manaloc.Memory.NativeRecord] is implemented with Reflection.Emit at run time, "
        + "which NativeAOT cannot do. Mark the interface [NativeRecord] (calls with it are then compiled and do not warn).";

    /// <summary>The reason New, NewArray and PreGenerate give for <see cref="RequiresUnreferencedCodeAttribute"/> (warning IL2026).</summary>
    public const string ReadsInterfaceMessage = "An interface not marked [Manaloc.Memory.NativeRecord] is read through reflection, which trimming "
        + "may break. Mark the interface [NativeRecord] (calls with it are then compiled and do not warn).";

    /// <summary>
    /// Registers the generated classes of a <see cref="NativeRecordAttribute"/> interface in every cache the run-time path
    /// reads (by key for <see cref="Get"/>, by generated type for <see cref="OfGenerated"/>, and per T through
    /// <paramref name="cacheForT"/>), so no later call emits code for it.
    /// </summary>
    /// <remarks>Idempotent per interface: a second registration (two module loads of one assembly cannot happen, but a
    /// test may call it again) returns the first one.</remarks>
    /// <param name="type">The record interface.</param>
    /// <param name="size">Record size, as the generator computed it.</param>
    /// <param name="alignment">Record alignment.</param>
    /// <param name="fields">The fields.</param>
    /// <param name="create">Factories of the checked, unchecked, checked-view, unchecked-view and checked-item classes, in that order.</param>
    /// <param name="classes">Those four classes, in the same order.</param>
    /// <param name="cacheForT">Publishes the registration in <see cref="RecordTypeCache{T}"/>.</param>
    /// <param name="jsonContract">The generated classes' System.Text.Json contracts (<see cref="ICompiledRecordFactory.JsonContract"/>).</param>
    public static unsafe CompiledRecordType RegisterCompiled(Type type, int size, int alignment, FieldLayout[] fields,
        delegate*<NativeRecord>[] create, Type[] classes, Action<CompiledRecordType> cacheForT,
        delegate*<Type, System.Text.Json.JsonSerializerOptions, System.Text.Json.Serialization.Metadata.JsonTypeInfo?> jsonContract)
    {
        lock (s_compiled)
        {
            if (s_compiled.TryGetValue(type, out var existing)) return existing;
            var layout = TypeLayout.FromCompiled(type, size, alignment, fields);
            ushort tag = NewTag(type, array: false), arrayTag = NewTag(type, array: true);
            RecordMode[] modes = [RecordMode.Checked, RecordMode.Unchecked, RecordMode.CheckedView, RecordMode.UncheckedView, RecordMode.CheckedItem];
            var records = new RecordType[modes.Length];
            for (int i = 0; i < modes.Length; i++)
            {
                records[i] = new RecordType(type, layout, classes[i], modes[i], create[i], tag, arrayTag, Interlocked.Increment(ref s_nextIndex));
                s_byGenerated[classes[i]] = records[i];
                s_types.TryAdd((type, modes[i]), new Lazy<RecordType>(records[i]));
            }
            var compiled = new CompiledRecordType(records[0], records[1], records[2], records[3], records[4], jsonContract);
            cacheForT(compiled);
            s_compiled.Add(type, compiled);
            return compiled;
        }
    }

    /// <summary>The registration of a compiled record interface, or null (the run-time emitter serves it on the JIT).</summary>
    public static CompiledRecordType? CompiledOf(Type type)
    {
        lock (s_compiled) return s_compiled.GetValueOrDefault(type);
    }

    /// <summary>
    /// The implementation New and NewArray use: the compiled one of a <see cref="NativeRecordAttribute"/> interface, else
    /// one emitted now where dynamic code is supported; under NativeAOT an unmarked interface is refused.
    /// </summary>
    /// <exception cref="NotSupportedException">No dynamic code and the interface is not a registered compiled record.</exception>
    public static RecordType ResolveForNew(Type type, RecordMode mode)
    {
        if (CompiledOf(type) is { } compiled)
        {
            return mode switch
            {
                RecordMode.Checked => compiled.Checked,
                RecordMode.Unchecked => compiled.Unchecked,
                RecordMode.CheckedView => compiled.CheckedView,
                RecordMode.CheckedItem => compiled.CheckedItem,
                _ => compiled.UncheckedView,
            };
        }
        if (!RuntimeFeature.IsDynamicCodeSupported)
        {
            throw new NotSupportedException($"'{type.FullName}' has no compile-time record implementation and this runtime cannot generate code (NativeAOT). "
                + "Mark the interface [Manaloc.Memory.NativeRecord] so the Manaloc source generator implements it at compile time.");
        }
        return GetEmitted(type, mode);
    }

    // Under NativeAOT the branch above returns before this is reached (IsDynamicCodeSupported is a constant false there,
    // so the compiler drops the emitter). A trimmed JIT application must mark its record interfaces [NativeRecord]: the
    // emitter reads the interface's properties through reflection, which trimming may remove (docs/memory.md).
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Reached only when RuntimeFeature.IsDynamicCodeSupported is true.")]
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Run-time emission serves unmarked interfaces on the JIT; trimmed applications mark theirs [NativeRecord] (documented).")]
    private static RecordType GetEmitted(Type type, RecordMode mode) => Get(type, mode);

    // Guarded by its own lock; read on the slow path only (first New of a type in an allocator mode).
    private static readonly Dictionary<Type, CompiledRecordType> s_compiled = [];
}
