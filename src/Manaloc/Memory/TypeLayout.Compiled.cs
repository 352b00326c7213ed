namespace Manaloc.Memory;

public sealed partial class TypeLayout
{
    /// <summary>
    /// The layout the source generator computed for a <see cref="NativeRecordAttribute"/> interface, checked against
    /// this runtime without reflection over the interface: each field's size must equal the runtime's, lie inside the
    /// record at an offset that is a multiple of its alignment, and overlap no other field.
    /// </summary>
    /// <exception cref="InvalidOperationException">The compiled layout does not hold here; the message names the field.</exception>
    internal static TypeLayout FromCompiled(Type type, int size, int alignment, CompiledField[] compiled)
    {
        if (size < 0 || size > MaxRecordSize || alignment <= 0 || (alignment & (alignment - 1)) != 0 || size % alignment != 0)
        {
            throw Mismatch(type, null, $"size {size} and alignment {alignment} are not a valid record shape");
        }
        var fields = new FieldLayout[compiled.Length];
        for (int i = 0; i < compiled.Length; i++)
        {
            var f = compiled[i];
            ArgumentNullException.ThrowIfNull(f.Type);
            int runtimeSize = CompiledRecords.SizeOf(f.Type);
            if (runtimeSize != f.Size)
            {
                throw Mismatch(type, f.Name, $"the generator assumed {Plural.Of(f.Size, "byte")} for {f.Type.Name}, this runtime has {runtimeSize} (compile-time layouts assume a 64-bit process)");
            }
            if (f.Offset < 0 || f.Alignment <= 0 || f.Offset % f.Alignment != 0 || (long)f.Offset + f.Size > size || f.Alignment > alignment)
            {
                throw Mismatch(type, f.Name, $"offset {f.Offset} (size {f.Size}, alignment {f.Alignment}) does not fit a {size}-byte record aligned to {alignment}");
            }
            fields[i] = new FieldLayout(f.Name, f.Type, f.Offset, f.Size, f.Alignment, []);
        }
        Array.Sort(fields, static (a, b) => a.Offset.CompareTo(b.Offset));
        for (int i = 1; i < fields.Length; i++)
        {
            if ((long)fields[i - 1].Offset + fields[i - 1].Size > fields[i].Offset)
            {
                throw Mismatch(type, fields[i].Name, $"it overlaps {fields[i - 1].Name}");
            }
        }
        return new TypeLayout(type, size, alignment, fields);
    }

    private static InvalidOperationException Mismatch(Type type, string? field, string reason)
        => new(field is null
            ? $"The compiled layout of '{type.FullName}' is invalid: {reason}. Rebuild with the Manaloc generator of this Manaloc version."
            : $"The compiled layout of '{type.FullName}' is invalid: field '{field}': {reason}. Rebuild with the Manaloc generator of this Manaloc version.");
}
