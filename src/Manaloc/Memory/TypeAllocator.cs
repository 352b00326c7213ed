using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// Typed objects in native memory: <see cref="New{T}"/>
/// returns a generated implementation of an interface of properties whose values live in zeroed
/// native memory at fixed, naturally aligned offsets; <see cref="Delete{T}(T)"/> frees it;
/// <see cref="PreGenerate"/> builds implementations ahead of first use; <see cref="NewArray{T}"/>
/// stores millions of records with no managed object per record.
/// </summary>
/// <remarks>
/// <para>Why: objects that live long and in large numbers cost the GC marking time and heap space;
/// here the GC sees one small handle per object (or one view per array) and the values live in a
/// <see cref="NativeSlabAllocator"/>. Implementations are emitted once per type (Reflection.Emit; no
/// compiler at run time), there is no native allocation call per object, every field is aligned, memory
/// starts zeroed, and misuse raises an exception: Delete twice, use after Delete (also after
/// the slot was reused), Delete of a foreign object, use after Dispose.</para>
/// <para>What T may be: a public interface (nested public too) whose members are properties,
/// inherited ones included, of unmanaged value types (primitives, bool, char, nint, enums, decimal,
/// Guid, DateTime, DateTimeOffset, TimeSpan, any struct without references). See <see cref="TypeLayout"/>.</para>
/// <para>Thread safety: New, Delete, NewArray, PreGenerate and the statistics are safe from any thread;
/// an object may be deleted on another thread than the one that made it. Dispose must not run
/// concurrently with other calls; afterwards every handle reports <c>IsAllocated == false</c> and throws
/// <see cref="ObjectDisposedException"/> when used.</para>
/// <para>No finalizer (it could free records other objects still use): Dispose the allocator.</para>
/// </remarks>
public sealed unsafe partial class TypeAllocator : IDisposable
{
    private readonly NativeSlabAllocator _slab;
    private readonly bool _checked;
    private readonly bool _recycle;
    private readonly ConcurrentDictionary<nint, string>? _stacks;
    private readonly Action<LiveObjectReport>? _leakReported;
    private volatile bool _disposed;
    private RecordType? _last;

    /// <summary>Creates a checked allocator with default options.</summary>
    public TypeAllocator() : this(new TypeAllocatorOptions()) { }

    /// <summary>Creates an allocator with <paramref name="options"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    public TypeAllocator(TypeAllocatorOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Name = string.IsNullOrWhiteSpace(options.Name) ? "default" : options.Name;
        _checked = options.Checked;
        if (options.RecycleHandles && options.Checked)
        {
            ThrowHelper.ThrowArgument(nameof(options), "RecycleHandles requires Checked = false: a recycled handle makes a reference kept after Delete refer to a later object, which the checks cannot detect.");
        }
        _recycle = options.RecycleHandles;
        _stacks = options.CaptureAllocationStacks ? new ConcurrentDictionary<nint, string>() : null;
        _leakReported = options.LeakReported;
        _slab = new NativeSlabAllocator($"{Name} (TypeAllocator)") { OwnedByTypeAllocator = true, DisposedObjectName = $"TypeAllocator '{Name}'" };
        MemoryMetrics.Register(this);
    }

    /// <summary>The name given in the options.</summary>
    public string Name { get; }

    /// <summary>True when handles are checked (the default): an access after Delete or Dispose throws, and so does a second Delete.</summary>
    public bool IsChecked => _checked;

    /// <summary>True once <see cref="Dispose"/> has run.</summary>
    public bool IsDisposed => _disposed;

    /// <summary>Allocates a zeroed record of interface <typeparamref name="T"/>.</summary>
    /// <typeparam name="T">A public interface whose members are properties of unmanaged value types.</typeparam>
    /// <returns>A managed handle whose properties read and write the native record.</returns>
    /// <remarks>Thread-safe. The first New of a type generates its implementation (once per process, even
    /// under races) unless <see cref="PreGenerate"/> did; later calls allocate from the calling thread's
    /// slab cache and create one small handle (with <see cref="TypeAllocatorOptions.RecycleHandles"/>, reuse one
    /// this thread deleted).</remarks>
    /// <exception cref="ArgumentException">T cannot be a record; the message names the type, member and reason.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    /// <exception cref="NotSupportedException">Under NativeAOT (no dynamic code): T is not marked <see cref="NativeRecordAttribute"/>.</exception>
    /// <remarks>Annotated because an unmarked T is implemented with Reflection.Emit, so trimming and NativeAOT warn at the
    /// call (IL2026, IL3050). A call whose T is a <see cref="NativeRecordAttribute"/> interface does not warn: the Manaloc
    /// source generator intercepts it (C# interceptors) and calls the compiled registration instead, and its diagnostic
    /// suppressor quiets the build-time analyzer there. A call with a type parameter for T warns (T may be any interface).</remarks>
    [RequiresDynamicCode(RecordTypes.EmitsCodeMessage)]
    [RequiresUnreferencedCode(RecordTypes.ReadsInterfaceMessage)]
    public T New<T>() where T : class => NewRecord<T>(null);

    /// <summary>The body of <see cref="New{T}"/>; <paramref name="registration"/> is the compiled registration of T when
    /// the caller is generated code for a <see cref="NativeRecordAttribute"/> interface (then nothing is ever emitted).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal T NewRecord<T>(CompiledRecordType? registration) where T : class
    {
        if (_disposed) ThrowDisposed();
        // Last type used here: a type-handle compare instead of a generic static lookup in shared code.
        var record = _last;
        if (record is null || record.InterfaceHandle != typeof(T).TypeHandle.Value)
        {
            record = (_checked ? RecordTypeCache<T>.Checked : RecordTypeCache<T>.Unchecked) ?? Resolve<T>(ObjectMode, registration);
            _last = record; // benign race: any RecordType of this mode is valid here
        }
        var cache = _slab.CurrentCache; // one thread-static read for the whole New
        var block = AllocateRecord(cache.Bins, record); // stamped, tagged, zeroed; its stack captured if asked
        NativeRecord handle;
        if (!_recycle || !TryReuseHandle(cache, record, out handle))
        {
            handle = record.Create();
            handle.RecycleIndex = record.Index < ushort.MaxValue ? (ushort)record.Index : ushort.MaxValue; // MaxValue: never recycled
        }
        handle.Address = block.Address;
        handle.Generation = block.Generation;
        handle.IsLarge = record.ClassIndex < 0;
        handle.IsDeleted = false; // a recycled handle was deleted before
        return Unsafe.As<T>(handle);
    }

    /// <summary>Frees a record from <see cref="New{T}"/>; the handle is invalid afterwards (with <see cref="TypeAllocatorOptions.RecycleHandles"/> a later New may hand the same handle out again).</summary>
    /// <param name="instance">The record to free.</param>
    /// <remarks>Thread-safe; any thread may delete. Of two racing Deletes of one object exactly one succeeds (not with
    /// <see cref="TypeAllocatorOptions.RecycleHandles"/>, where the winner may already have handed the handle out again).</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="instance"/> is null.</exception>
    /// <exception cref="ArgumentException">The object was not made by a TypeAllocator, was made by another one, or is a record array's view.</exception>
    /// <exception cref="InvalidOperationException">The object was already deleted.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    public void Delete<T>(T instance) where T : class
    {
        // The whole check is one expression so the hot path stays small; ThrowDeleteFailure says which part failed.
        // In both modes the stamp moves by compare-exchange, so of two racing Deletes exactly one frees (a plain compare
        // and store would let both free, and the block enter two free lists: a crash later, not only a wrong answer).
        // IsDeleted refuses a second Delete of this handle whatever the stamp says: a stale Delete after the 32-bit stamp
        // wrapped round to this generation could otherwise release a live object's slot.
        if (instance is NativeRecord { IsViewHandle: false, IsDeleted: false } handle && handle.Address != null && !_disposed
            && TryReleaseHandle(handle, out int cls, out SlabChunk? chunk))
        {
            byte* address = handle.Address;
            if (_stacks is not null) _stacks.TryRemove((nint)address, out _);
            // This handle's Delete and IsAllocated fail from now on whatever the stamp does later. Its accessors compare the
            // stamp, which the release above moved to even (free), with the odd generation kept here, so this handle and
            // every copy of it throw when used, and can never pass on a free block (a 0 here would, once the stamp wraps).
            handle.IsDeleted = true;
            var cache = _slab.CurrentCache; // one thread-static read for the whole Delete
            if (chunk is null) _slab.FreeToClass(cache, address, cls);
            else _slab.FreeDedicated(chunk, deferred: false);
            if (_recycle && handle.RecycleIndex != ushort.MaxValue) KeepHandle(cache, handle, handle.RecycleIndex);
            return;
        }
        ThrowDeleteFailure(instance);
    }

    /// <summary>Moves the handle's stamp to free if it is this allocator's and live: a class block's owner and size class are
    /// in its chunk's header, a large record's block is found in the slab's table of large blocks (under its lock).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryReleaseHandle(NativeRecord handle, out int cls, out SlabChunk? chunk)
    {
        byte* address = handle.Address;
        chunk = null;
        cls = -1;
        ref uint stamp = ref Unsafe.NullRef<uint>();
        if (!handle.IsLarge)
        {
            byte* header = SizeClasses.ChunkStart(address);
            if (*(long*)(header + 16) != _slab.RecordToken) return false;
            cls = ((int*)header)[1];
            stamp = ref *(uint*)(address + SizeClasses.Sizes[cls] - 4);
        }
        else if (_slab.DedicatedChunkOf(address) is not { Home: not null } large)
        {
            return false;
        }
        else
        {
            chunk = large;
            stamp = ref large.StampOf(address); // the block's trailer
        }
        return NativeSlabAllocator.TryReleaseStamp(ref stamp, handle.Generation);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDeleteFailure(object? instance)
    {
        if (instance is null) ThrowHelper.ThrowArgumentNull(nameof(instance));
        if (instance is not NativeRecord handle)
        {
            ThrowHelper.ThrowNotOurs(nameof(instance), $"The {RecordTypes.TypeName(instance.GetType())} was not created by a TypeAllocator.");
            return;
        }
        if (handle.IsViewHandle)
        {
            string array = $"RecordArray<{RecordTypes.TypeName(handle.RecordInterface)}>";
            ThrowHelper.ThrowNotOurs(nameof(instance), handle.IsItem
                ? $"The object is an item of a {array}; its records are freed together: dispose the array instead."
                : $"The object is a view of a {array}; dispose the array instead.");
        }
        string name = RecordTypes.TypeName(handle.RecordInterface);
        if (handle.Address == null)
        {
            // Only a recycled handle waiting for reuse has no address (every handle New makes gets one).
            Diagnostics.ManalocEventSource.Log.DoubleFree(name);
            ThrowHelper.ThrowInvalidOperation($"The {name} record was already deleted.");
        }
        bool foreign = TokenOf(handle.Address, handle.StampOffset) != _slab.RecordToken && !handle.IsDeleted && *handle.StampAddress == handle.Generation;
        if (foreign)
        {
            if (_disposed) ThrowDisposed();
            ThrowHelper.ThrowNotOurs(nameof(instance), $"The {name} record belongs to another TypeAllocator, not '{Name}'.");
        }
        if (_disposed) ThrowDisposed();
        if (!handle.IsDeleted && RecordChunks.WasDisposed(handle.Address, handle.Generation, handle.StampOffset, out string? owner))
        {
            ThrowHelper.ThrowDisposed($"TypeAllocator '{owner}' (the {name} record's allocator)");
        }
        Diagnostics.ManalocEventSource.Log.DoubleFree(name);
        ThrowHelper.ThrowInvalidOperation($"The {name} record was already deleted.");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ForgetStack(byte* p) => _stacks?.TryRemove((nint)p, out _);

    [MethodImpl(MethodImplOptions.NoInlining)] // StackTrace(2) skips this frame and its caller's: inlined, it would skip a user frame
    private void CaptureStack(byte* p) => _stacks![(nint)p] = new StackTrace(2, fNeedFileInfo: true).ToString();

    /// <summary>Generates the implementations of <paramref name="types"/> now, so that a later New never waits on code generation.</summary>
    /// <param name="types">Interfaces to prepare.</param>
    /// <remarks>Thread-safe. Generates the implementations this allocator's New and NewArray use (for a checked
    /// allocator: the checked handle, the record-array view and the record-array item; for an unchecked one: one for
    /// all).</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="types"/> or one of its items is null.</exception>
    /// <exception cref="ArgumentException">A type cannot be a record; the message names the type, member and reason.</exception>
    /// <remarks>Annotated like <see cref="New{T}"/>: a call whose arguments are all <c>typeof</c> of
    /// <see cref="NativeRecordAttribute"/> interfaces is intercepted by the source generator and does not warn.</remarks>
    [RequiresDynamicCode(RecordTypes.EmitsCodeMessage)]
    [RequiresUnreferencedCode(RecordTypes.ReadsInterfaceMessage)]
    public void PreGenerate(params Type[] types)
    {
        ArgumentNullException.ThrowIfNull(types);
        foreach (var type in types)
        {
            if (type is null) ThrowHelper.ThrowArgumentNull(nameof(types));
            RecordTypes.Get(type, ObjectMode);
            if (ViewMode != ObjectMode) RecordTypes.Get(type, ViewMode);
            if (_checked) RecordTypes.Get(type, RecordMode.CheckedItem);
        }
    }

    /// <summary>The native layout of interface <paramref name="type"/>.</summary>
    /// <param name="type">An interface.</param>
    /// <exception cref="ArgumentException">The type cannot be a record.</exception>
    [RequiresUnreferencedCode("Reads the interface's properties through reflection.")]
    public TypeLayout GetLayout(Type type) => TypeLayout.Of(type);

    /// <summary>Implementations generated so far in this process (each interface and mode once).</summary>
    public static long GeneratedTypeCount => RecordTypes.GeneratedCount;

    /// <summary>Frees every record and array still alive and reports them as leaks (event <c>Leak</c>, and <see cref="TypeAllocatorOptions.LeakReported"/>).</summary>
    /// <remarks>Not thread-safe with other calls. Idempotent. Handles made by this allocator throw <see cref="ObjectDisposedException"/> afterwards.</remarks>
    public void Dispose()
    {
        if (_disposed) return;
        var leaks = GetLiveObjects(withStacks: _stacks is not null);
        _disposed = true;
        InvalidateAllViews(); // before the memory goes
        LastLeakReport = leaks;
        foreach (var entry in leaks.Entries)
        {
            Diagnostics.ManalocEventSource.Log.Leak(entry.TypeName, entry.Count, entry.Bytes);
        }
        _slab.Dispose();
        MemoryMetrics.Unregister(this);
        if (leaks.Entries.Count > 0) _leakReported?.Invoke(leaks);
    }

    /// <summary>The allocator's name and state: <c>TypeAllocator 'quotes' (checked, 12 live blocks)</c>, or <c>(disposed)</c>.</summary>
    /// <remarks>Thread-safe and cheap: the live blocks (records, and the blocks of record arrays) come from the counters the
    /// statistics keep, not from a scan of the records; approximate while other threads allocate.</remarks>
    public override string ToString()
        => _disposed ? $"TypeAllocator '{Name}' (disposed)" : $"TypeAllocator '{Name}' ({(_checked ? "checked" : "unchecked")}, {NativeSlabAllocator.LiveBlocksText(_slab.GetStatistics().LiveBlocks)})";

    /// <summary>Throws the <see cref="ObjectDisposedException"/> of this allocator, naming it.</summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void ThrowDisposed() => ThrowHelper.ThrowDisposed($"TypeAllocator '{Name}'");

    /// <summary>What was still alive when <see cref="Dispose"/> ran (null before).</summary>
    public LiveObjectReport? LastLeakReport { get; private set; }

    /// <summary>Zeroes a record: a few vector stores for small class blocks (the record rounded up to 8), memset otherwise.</summary>
    /// <remarks>Never the block's trailer (its last 8 bytes: tag and stamp): the record rounded up to 8 ends at or before it.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void ClearRecord(byte* p, RecordType record)
    {
        int clear = record.ClearBytes;
        if (clear <= 64)
        {
            // Class blocks are 16-byte aligned: whole vectors, then one 8-byte store when the record ends on an odd 8.
            int offset = 0;
            for (; offset + 16 <= clear; offset += 16)
            {
                *(Vector128<byte>*)(p + offset) = Vector128<byte>.Zero; // a plain typed store (movups): the generic StoreAligned<T>(T*) call trips the Coyote rewriter (Mono.Cecil)
            }
            if (offset < clear) *(ulong*)(p + offset) = 0;
        }
        else
        {
            NativeMemory.Clear(p, record.BlockSize);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static RecordType Resolve<T>(RecordMode mode, CompiledRecordType? registration = null) where T : class
    {
        var record = registration is null ? RecordTypes.ResolveForNew(typeof(T), mode) : registration.Of(typeof(T), mode);
        // Plain publication is enough: the record is immutable and fully built (by Lazy, which fences), and
        // .NET stores of object references are releases, so a reader that sees it sees its fields.
        switch (mode)
        {
            case RecordMode.Checked: RecordTypeCache<T>.Checked = record; break;
            case RecordMode.Unchecked: RecordTypeCache<T>.Unchecked = record; break;
            case RecordMode.CheckedView: RecordTypeCache<T>.CheckedView = record; break;
            case RecordMode.CheckedItem: RecordTypeCache<T>.CheckedItem = record; break;
            default: RecordTypeCache<T>.UncheckedView = record; break;
        }
        return record;
    }

    /// <summary>The mode of handles from New in this allocator.</summary>
    private RecordMode ObjectMode => _checked ? RecordMode.Checked : RecordMode.Unchecked;

    /// <summary>The mode of record-array views in this allocator.</summary>
    private RecordMode ViewMode => _checked ? RecordMode.CheckedView : RecordMode.UncheckedView;
}
