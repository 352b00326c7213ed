namespace Manaloc.Analyzers;

/// <summary>What a tracked variable holds: decides which calls create and release it and which rule reports.</summary>
internal enum ResourceKind : byte
{
    None,
    /// <summary>An array rented from an <c>ArrayPool&lt;T&gt;</c> (MNL101, MNL102).</summary>
    PooledArray,
    /// <summary>A <c>RentedBuffer</c>, a memory owner rented from a <c>MemoryPool&lt;T&gt;</c> such as <c>BufferMemoryPool</c>, a
    /// <c>PooledBufferWriter</c> or a <c>PooledBufferStream</c> (MNL103).</summary>
    BufferOwner,
    /// <summary>An object rented from an object pool (MNL104).</summary>
    PooledObject,
    /// <summary>A record handle of a <c>TypeAllocator</c> (MNL105).</summary>
    Record,
    /// <summary>A <c>RecordArray&lt;T&gt;</c> (MNL105 after Dispose; MNL106 never disposed).</summary>
    RecordArray,
    /// <summary>A read or write scope of a <c>SlimReaderWriterLock</c> (MNL106).</summary>
    Scope,
    /// <summary>A Manaloc type that owns native memory, pooled memory, a thread or a timer, created with <c>new</c> (MNL106).</summary>
    Disposable,
    /// <summary>A thread's held heap (MNL107).</summary>
    ThreadHeap,
    /// <summary>A struct record handle assigned <c>default</c> somewhere in the method (MNL108): Released means "holds default".</summary>
    DefaultHandle,
}

/// <summary>The types the rules know, resolved once per compilation; a type the compilation lacks is null and its rules stay silent.</summary>
internal sealed class KnownSymbols
{
    public readonly INamedTypeSymbol? ArrayPool;
    public readonly INamedTypeSymbol? RentedBuffer;
    public readonly INamedTypeSymbol? ObjectPoolInterface;
    public readonly INamedTypeSymbol? ExtensionsObjectPool;
    public readonly INamedTypeSymbol? TypeAllocator;
    public readonly INamedTypeSymbol? TypeAllocatorInterface;
    public readonly INamedTypeSymbol? TypeThreadHeap;
    public readonly INamedTypeSymbol? SlabThreadHeap;
    public readonly INamedTypeSymbol? RecordArray;
    public readonly INamedTypeSymbol? ReaderWriterLock;
    public readonly INamedTypeSymbol? ReadScope;
    public readonly INamedTypeSymbol? WriteScope;
    public readonly INamedTypeSymbol? Dispatcher;
    public readonly INamedTypeSymbol? Span;
    public readonly INamedTypeSymbol? ReadOnlySpan;
    public readonly INamedTypeSymbol? MemoryExtensions;
    public readonly INamedTypeSymbol? Task;
    public readonly INamedTypeSymbol? TaskFactory;
    public readonly INamedTypeSymbol? Parallel;
    public readonly INamedTypeSymbol? ThreadPool;
    public readonly INamedTypeSymbol? Thread;
    public readonly INamedTypeSymbol? RecordRef;
    public readonly INamedTypeSymbol? UncheckedRecordRef;
    public readonly INamedTypeSymbol? TypedRecordRef;
    public readonly INamedTypeSymbol? TypedUncheckedRecordRef;
    public readonly INamedTypeSymbol? RecordView;
    public readonly INamedTypeSymbol? ScanEnumerator;
    public readonly INamedTypeSymbol? Enumerable;
    public readonly INamedTypeSymbol? MemoryPool;
    public readonly INamedTypeSymbol? MemoryOwner;
    public readonly INamedTypeSymbol? PooledBufferWriter;
    public readonly INamedTypeSymbol? PooledBufferStream;
    public readonly INamedTypeSymbol? Encoding;
    public readonly INamedTypeSymbol? Stream;
    /// <summary>Manaloc types that own native memory, pooled memory, a thread or a timer until they are disposed (MNL106).
    /// Keyed by metadata name, so a type the referenced Manaloc does not have yet is simply absent.</summary>
    private readonly INamedTypeSymbol[] _owningDisposables;

    public KnownSymbols(Compilation compilation)
    {
        ArrayPool = compilation.GetTypeByMetadataName("System.Buffers.ArrayPool`1");
        RentedBuffer = compilation.GetTypeByMetadataName("Manaloc.Buffers.RentedBuffer");
        ObjectPoolInterface = compilation.GetTypeByMetadataName("Manaloc.Pooling.IObjectPool`1");
        ExtensionsObjectPool = compilation.GetTypeByMetadataName("Microsoft.Extensions.ObjectPool.ObjectPool`1");
        TypeAllocator = compilation.GetTypeByMetadataName("Manaloc.Memory.TypeAllocator");
        TypeAllocatorInterface = compilation.GetTypeByMetadataName("Manaloc.Memory.ITypeAllocator");
        TypeThreadHeap = compilation.GetTypeByMetadataName("Manaloc.Memory.TypeAllocator+ThreadHeap");
        SlabThreadHeap = compilation.GetTypeByMetadataName("Manaloc.Memory.NativeSlabAllocator+ThreadHeap");
        RecordArray = compilation.GetTypeByMetadataName("Manaloc.Memory.RecordArray`1");
        ReaderWriterLock = compilation.GetTypeByMetadataName("Manaloc.Threading.SlimReaderWriterLock");
        ReadScope = compilation.GetTypeByMetadataName("Manaloc.Threading.SlimReaderWriterLock+ReadScope");
        WriteScope = compilation.GetTypeByMetadataName("Manaloc.Threading.SlimReaderWriterLock+WriteScope");
        Dispatcher = compilation.GetTypeByMetadataName("Manaloc.Threading.DedicatedThreadDispatcher");
        Span = compilation.GetTypeByMetadataName("System.Span`1");
        ReadOnlySpan = compilation.GetTypeByMetadataName("System.ReadOnlySpan`1");
        MemoryExtensions = compilation.GetTypeByMetadataName("System.MemoryExtensions");
        Task = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task");
        TaskFactory = compilation.GetTypeByMetadataName("System.Threading.Tasks.TaskFactory");
        Parallel = compilation.GetTypeByMetadataName("System.Threading.Tasks.Parallel");
        ThreadPool = compilation.GetTypeByMetadataName("System.Threading.ThreadPool");
        Thread = compilation.GetTypeByMetadataName("System.Threading.Thread");
        RecordRef = compilation.GetTypeByMetadataName("Manaloc.Memory.RecordRef");
        UncheckedRecordRef = compilation.GetTypeByMetadataName("Manaloc.Memory.UncheckedRecordRef");
        TypedRecordRef = compilation.GetTypeByMetadataName("Manaloc.Memory.CompilerServices.RecordRef`1");
        TypedUncheckedRecordRef = compilation.GetTypeByMetadataName("Manaloc.Memory.CompilerServices.UncheckedRecordRef`1");
        RecordView = compilation.GetTypeByMetadataName("Manaloc.Memory.RecordView`1");
        ScanEnumerator = compilation.GetTypeByMetadataName("Manaloc.Memory.RecordArray`1+ScanEnumerator");
        Enumerable = compilation.GetTypeByMetadataName("System.Collections.IEnumerable");
        MemoryPool = compilation.GetTypeByMetadataName("System.Buffers.MemoryPool`1");
        MemoryOwner = compilation.GetTypeByMetadataName("System.Buffers.IMemoryOwner`1");
        PooledBufferWriter = compilation.GetTypeByMetadataName("Manaloc.Buffers.PooledBufferWriter");
        PooledBufferStream = compilation.GetTypeByMetadataName("Manaloc.Buffers.PooledBufferStream");
        Encoding = compilation.GetTypeByMetadataName("System.Text.Encoding");
        Stream = compilation.GetTypeByMetadataName("System.IO.Stream");
        var owning = new List<INamedTypeSymbol>();
        foreach (string name in OwningDisposableNames)
            if (compilation.GetTypeByMetadataName(name) is { } type) owning.Add(type);
        _owningDisposables = owning.ToArray();
    }

    private static readonly string[] OwningDisposableNames =
    [
        "Manaloc.Threading.EconomicResetEvent", "Manaloc.Threading.DedicatedThreadDispatcher", "Manaloc.Threading.ScheduledValue`1",
        "Manaloc.Memory.TypeAllocator", "Manaloc.Memory.NativeSlabAllocator",
        "Manaloc.Buffers.BufferManager", "Manaloc.Buffers.BufferMemoryPool",
        "Manaloc.Pooling.SemiLocalPool`1", "Manaloc.Pooling.CategorizedPool`1",
        // The native collections: recognised as soon as the referenced Manaloc has them.
        "Manaloc.Collections.NativeMap`2", "Manaloc.Collections.ConcurrentNativeMap`2",
        "Manaloc.Collections.NativeCache", "Manaloc.Collections.NativeCache`2",
    ];

    /// <summary>True when any rule can fire in this compilation (an ArrayPool always exists; the rest are Manaloc's).</summary>
    public bool Any => ArrayPool is not null || RentedBuffer is not null || ExtensionsObjectPool is not null;

    public static bool Is(ITypeSymbol? type, INamedTypeSymbol? known) =>
        known is not null && type is not null && SymbolEqualityComparer.Default.Equals(type.OriginalDefinition, known);

    /// <summary>The type or one of its base classes is <paramref name="known"/> (a generic definition matches any construction).</summary>
    public static bool DerivesFrom(ITypeSymbol? type, INamedTypeSymbol? known)
    {
        if (known is null) return false;
        for (ITypeSymbol? t = type; t is not null; t = t.BaseType)
            if (SymbolEqualityComparer.Default.Equals(t.OriginalDefinition, known)) return true;
        return false;
    }

    public static bool Implements(ITypeSymbol? type, INamedTypeSymbol? known)
    {
        if (known is null || type is null) return false;
        if (Is(type, known)) return true;
        foreach (INamedTypeSymbol i in type.AllInterfaces)
            if (SymbolEqualityComparer.Default.Equals(i.OriginalDefinition, known)) return true;
        return false;
    }

    public bool IsThreadHeap(ITypeSymbol? type) => Is(type, TypeThreadHeap) || Is(type, SlabThreadHeap);

    /// <summary>A struct handle to a record: <c>RecordRef</c>, <c>UncheckedRecordRef</c>, their typed forms, or a generated
    /// <c>XxxRef</c> / <c>XxxUncheckedRef</c> (a struct whose <c>Handle</c> is one of the untyped two).</summary>
    public bool IsRecordHandle(ITypeSymbol? type)
    {
        if (type is not INamedTypeSymbol { TypeKind: TypeKind.Struct } named || RecordRef is null) return false;
        if (Is(named, RecordRef) || Is(named, UncheckedRecordRef) || Is(named, TypedRecordRef) || Is(named, TypedUncheckedRecordRef)) return true;
        foreach (ISymbol member in named.GetMembers("Handle"))
            if (member is IPropertySymbol { IsStatic: false } handle && (Is(handle.Type, RecordRef) || Is(handle.Type, UncheckedRecordRef))) return true;
        return false;
    }

    /// <summary>A handle's members that read nothing through it: asking whether it is allocated, comparing, converting.</summary>
    public static bool ReadsNoRecord(string member) =>
        member is "IsAllocated" or "Handle" or "Untyped" or "AsUnchecked" or "Equals" or "GetHashCode" or "ToString" or "GetType";

    /// <summary>Deletes its argument: <c>TypeAllocator.DeleteRef</c>, <c>ThreadHeap.Delete</c> of a struct handle.</summary>
    public bool DeletesHandleArgument(IMethodSymbol m) =>
        m.Name is "DeleteRef" or "Delete" && (Is(m.ContainingType, TypeAllocator) || Is(m.ContainingType, TypeAllocatorInterface) || Is(m.ContainingType, TypeThreadHeap));

    /// <summary>An expression whose value is a moving view: <c>RecordArray.View</c>, <c>RecordView.Value</c>, a <c>MoveTo</c> result.</summary>
    public bool IsMovingViewSource(IOperation op) => op switch
    {
        IPropertyReferenceOperation p => (p.Property.Name == "View" && Is(p.Property.ContainingType, RecordArray))
                                         || (p.Property.Name == "Value" && Is(p.Property.ContainingType, RecordView)),
        IInvocationOperation i => i.TargetMethod.Name == "MoveTo" && (Is(i.TargetMethod.ContainingType, RecordArray) || Is(i.TargetMethod.ContainingType, RecordView)),
        _ => false,
    };

    /// <summary>A method that keeps its argument in a collection: Add, Insert, Push, Enqueue… on a type that enumerates.</summary>
    public bool AddsToCollection(IMethodSymbol m)
    {
        if (m.IsStatic && !m.IsExtensionMethod) return false;
        string n = m.Name;
        bool adds = n.StartsWith("Add", System.StringComparison.Ordinal) || n.StartsWith("Insert", System.StringComparison.Ordinal)
                    || n.StartsWith("TryAdd", System.StringComparison.Ordinal) || n is "Push" or "TryPush" or "Enqueue" or "TryEnqueue"
                    or "GetOrAdd" or "TryUpdate" or "Append" or "Prepend" or "Set" or "TryWrite" or "WriteAsync";
        if (!adds) return false;
        ITypeSymbol? owner = m.IsExtensionMethod && m.ReducedFrom is not null ? m.ReceiverType : m.ContainingType;
        return Implements(owner, Enumerable) || owner?.Name == "ChannelWriter";
    }

    public bool IsScope(ITypeSymbol? type) => Is(type, ReadScope) || Is(type, WriteScope);

    public bool IsOwnedDisposable(ITypeSymbol? type)
    {
        foreach (INamedTypeSymbol owning in _owningDisposables)
            if (Is(type, owning)) return true;
        return false;
    }

    /// <summary>A pooled writer or stream: its segments go back to its manager on Dispose (MNL103, MNL110).</summary>
    public bool IsPooledWriter(ITypeSymbol? type) => Is(type, PooledBufferWriter) || Is(type, PooledBufferStream);

    /// <summary>A type whose Dispose gives memory back to a pool: a buffer owner in MNL103's sense.</summary>
    public bool IsBufferOwner(ITypeSymbol? type) => Is(type, RentedBuffer) || Is(type, MemoryOwner) || IsPooledWriter(type);

    /// <summary>The kind of resource a value creates, or None.</summary>
    public ResourceKind Creation(IOperation value)
    {
        switch (value)
        {
            case IInvocationOperation inv:
            {
                IMethodSymbol m = inv.TargetMethod;
                ITypeSymbol returned = m.ReturnType;
                if (m.Name == "Rent" && returned is IArrayTypeSymbol && DerivesFrom(m.ContainingType, ArrayPool)) return ResourceKind.PooledArray;
                if (Is(returned, RentedBuffer)) return ResourceKind.BufferOwner;
                // BufferMemoryPool (or any MemoryPool<T>): its owner gives the array back on Dispose.
                if (m.Name == "Rent" && Is(returned, MemoryOwner) && DerivesFrom(m.ContainingType, MemoryPool)) return ResourceKind.BufferOwner;
                if (IsScope(returned)) return ResourceKind.Scope;
                // An allocator's NewArray makes one the caller owns; any other method returning one may hand out an
                // array it keeps (a per-thread cache), so only its Dispose and later uses are followed.
                if (Is(returned, RecordArray) && m.Name == "NewArray"
                    && (Is(m.ContainingType, TypeAllocator) || Is(m.ContainingType, TypeAllocatorInterface))) return ResourceKind.RecordArray;
                if (m.Name == "Rent" && Implements(m.ContainingType, ObjectPoolInterface)) return ResourceKind.PooledObject;
                if (m.Name == "Get" && DerivesFrom(m.ContainingType, ExtensionsObjectPool)) return ResourceKind.PooledObject;
                return ResourceKind.None;
            }
            case IObjectCreationOperation creation when IsOwnedDisposable(creation.Type):
                return ResourceKind.Disposable;
            case IObjectCreationOperation creation when IsPooledWriter(creation.Type):
                return ResourceKind.BufferOwner;
            default:
                return ResourceKind.None;
        }
    }

    /// <summary>The operation a call releases (its argument or its receiver) and the kind it releases, or null.</summary>
    public IOperation? Release(IInvocationOperation inv, out ResourceKind kind)
    {
        kind = ResourceKind.None;
        IMethodSymbol m = inv.TargetMethod;
        switch (m.Name)
        {
            case "Return" when inv.Arguments.Length >= 1:
                if (DerivesFrom(m.ContainingType, ArrayPool)) kind = ResourceKind.PooledArray;
                else if (Implements(m.ContainingType, ObjectPoolInterface) || DerivesFrom(m.ContainingType, ExtensionsObjectPool)) kind = ResourceKind.PooledObject;
                else return null;
                return ArgumentFor(inv, 0);
            case "Delete" or "DeleteRef":
                if (inv.Arguments.Length >= 1 && (Is(m.ContainingType, TypeAllocator) || Is(m.ContainingType, TypeAllocatorInterface) || Is(m.ContainingType, TypeThreadHeap)))
                {
                    kind = ResourceKind.Record;
                    return ArgumentFor(inv, 0);
                }
                // A generated struct handle deletes itself: handle.Delete(allocator) or handle.Delete(heap).
                if (!m.IsStatic && m.ContainingType.IsValueType && m.Parameters.Length == 1 && inv.Instance is not null
                    && (Is(m.Parameters[0].Type, TypeAllocator) || Is(m.Parameters[0].Type, TypeThreadHeap)))
                {
                    kind = ResourceKind.Record;
                    return inv.Instance;
                }
                return null;
            case "Dispose" or "DisposeAsync" when m.Parameters.Length == 0 && inv.Instance is not null:
                ITypeSymbol? type = m.ContainingType;
                if (Is(type, RentedBuffer) || IsPooledWriter(type)) kind = ResourceKind.BufferOwner;
                else if (Is(type, RecordArray)) kind = ResourceKind.RecordArray;
                else if (IsScope(type)) kind = ResourceKind.Scope;
                else if (IsOwnedDisposable(type)) kind = ResourceKind.Disposable;
                else
                {
                    // Through IDisposable (a using statement, or an explicit cast): the receiver's own type decides.
                    IOperation receiver = Flow.StripConversions(inv.Instance);
                    ITypeSymbol? rt = receiver.Type;
                    if (IsBufferOwner(rt)) kind = ResourceKind.BufferOwner;
                    else if (Is(rt, RecordArray)) kind = ResourceKind.RecordArray;
                    else if (IsOwnedDisposable(rt)) kind = ResourceKind.Disposable;
                    else return null;
                }
                return inv.Instance;
            default:
                return null;
        }
    }

    private static IOperation? ArgumentFor(IInvocationOperation inv, int ordinal)
    {
        foreach (IArgumentOperation a in inv.Arguments)
            if (a.Parameter?.Ordinal == ordinal) return a.Value;
        return null;
    }

    /// <summary>Calls that cannot throw in practice, so no exception path starts there (MNL111 names a call that can throw):
    /// span views and span members, the searching and comparing members of <c>MemoryExtensions</c>, <c>GC.KeepAlive</c>,
    /// <c>Debug</c>, <c>Math</c>, <c>BitOperations</c>, <c>HashCode</c>, <c>Unsafe</c>, <c>Volatile</c>, <c>Interlocked</c>,
    /// and an <c>Encoding</c>'s counting and decoding (its default replacement fallback never throws). A copy or an encoding
    /// into a buffer sized from its source is <see cref="MethodAnalysis"/>'s question: it needs the rented size.</summary>
    public bool CannotThrow(IInvocationOperation inv)
    {
        IMethodSymbol m = inv.TargetMethod;
        INamedTypeSymbol t = m.ContainingType;
        if (Is(t, Span) || Is(t, ReadOnlySpan)) return true;
        if (Is(t, MemoryExtensions)) return m.Name is not ("CopyTo" or "Replace" or "Sort" or "Split" or "TryWrite");
        if (Is(t, Encoding) || DerivesFrom(t, Encoding))
            return m.Name is "GetString" or "GetCharCount" or "GetByteCount" or "GetMaxByteCount" or "GetMaxCharCount" or "GetPreamble" or "GetHashCode" or "Equals";
        string? ns = t.ContainingNamespace?.ToDisplayString();
        return (ns, t.Name) switch
        {
            ("System", "GC") => m.Name is "KeepAlive" or "SuppressFinalize",
            ("System.Diagnostics", "Debug") => true,
            ("System", "Math") => m.Name is not ("Clamp" or "DivRem" or "Round" or "Sign"),
            ("System.Numerics", "BitOperations") => true,
            ("System", "HashCode") => true,
            ("System.Runtime.CompilerServices", "Unsafe") => true,
            ("System.Threading", "Volatile") or ("System.Threading", "Interlocked") => true,
            ("System", "String") => m.Name is "CompareOrdinal" or "Equals" or "IsNullOrEmpty" or "GetHashCode",
            // System.IO.Hashing's one-shot hashes of a span (XxHash3.HashToUInt64, Crc32.HashToUInt32…).
            ("System.IO.Hashing", _) => m.IsStatic && m.Name.StartsWith("Hash", StringComparison.Ordinal) && m.Parameters.Length <= 2,
            _ => false,
        };
    }

    /// <summary>Types whose methods run a delegate on another thread (a lambda passed to them may run elsewhere).</summary>
    public bool RunsElsewhere(INamedTypeSymbol? type) =>
        Is(type, Task) || Is(type, TaskFactory) || Is(type, Parallel) || Is(type, ThreadPool) || Is(type, Thread) || Is(type, Dispatcher);
}
