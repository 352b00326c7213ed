namespace Manaloc.Memory.CompilerServices;

/// <summary>Where <see cref="CompiledRecords.Register{TInterface, TFactory}"/> leaves the registration of one generated record.</summary>
internal static class CompiledRecordSlot<TRecord> where TRecord : struct, ICompiledRecordFactory
{
    // Written once by Register (in the record's module initializer), read by CompiledRecordConstants' initializer.
    // Plain: the registration is immutable and fully built, and .NET reference stores are releases.
    public static CompiledRecordType? Type;
}

/// <summary>
/// The layout constants of one generated record, as <c>static readonly</c> fields of a class instantiated over the
/// record's generated struct: the JIT reads them as constants once the class is initialized, so the generic handles'
/// accessors and the held heap's New and Delete compile to the bare loads and stores with no record-type object in
/// sight (that object's field loads would otherwise be most of an unchecked New+Delete's cost).
/// </summary>
/// <remarks>
/// A type argument that was never registered (a hand-written factory) gets <see cref="ClassIndex"/> =
/// <see cref="Unregistered"/>: New refuses it and handles of it can only be default. The constants are kept for the life
/// of the process once read, so the initializer does not wait for the module initializer that registers the record (a
/// user's initializer may run first and use a handle): it asks the generated struct itself
/// (<see cref="ICompiledRecordFactory.Registration"/>), which registers the record if nothing has yet.
/// </remarks>
internal static class CompiledRecordConstants<TRecord> where TRecord : struct, ICompiledRecordFactory
{
    /// <summary><see cref="ClassIndex"/> of a type argument that no module registered.</summary>
    public const int Unregistered = -2;

    public static readonly CompiledRecordType? Type = Find();

    /// <summary>The slab class of the record's block; -1 for a record larger than the largest class (its own block), <see cref="Unregistered"/>.</summary>
    public static readonly int ClassIndex = Type is null ? Unregistered : Type.Unchecked.ClassIndex;

    /// <summary>The stamp's offset from the record's address (positive), or 0 when unregistered.</summary>
    public static readonly int StampOffset = Type?.Unchecked.StampOffset ?? 0;

    /// <summary>Bytes New clears (class blocks only).</summary>
    public static readonly int ClearBytes = Type?.Unchecked.ClearBytes ?? 0;

    /// <summary>The tag and class New writes beside the stamp.</summary>
    public static readonly uint TagAndClass = Type?.Unchecked.TagAndClass ?? 0;

    /// <summary>
    /// Whether an untyped handle whose stamp is at <paramref name="stampOffset"/> is a handle of this record: false for
    /// default (offset 0); throws for a record of another type, or when <typeparamref name="TRecord"/> is not registered.
    /// The checked and unchecked typed handles' <c>From</c> both convert through it.
    /// </summary>
    /// <exception cref="ArgumentException">The handle is of a record of another size (named <paramref name="paramName"/>).</exception>
    /// <exception cref="InvalidOperationException"><typeparamref name="TRecord"/> is not a generated registration.</exception>
    public static bool IsHandleOfThisRecord(int stampOffset, string paramName)
    {
        if (stampOffset == 0) return false;
        if (Type is null) ThrowHelper.ThrowNotRegistered(typeof(TRecord));
        if (stampOffset != StampOffset) ThrowHelper.ThrowOtherRecordType(paramName);
        return true;
    }

    private static CompiledRecordType? Find() => CompiledRecordSlot<TRecord>.Type ?? TRecord.Registration;
}
