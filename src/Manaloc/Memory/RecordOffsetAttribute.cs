namespace Manaloc.Memory;

/// <summary>Fixes the byte offset of a property in its <see cref="TypeAllocator"/> record.</summary>
/// <remarks>
/// Why: a layout shared with native code or a file format must not move when properties are added.
/// The offset must be a multiple of the property type's natural alignment and must not overlap
/// another property; <see cref="TypeLayout.Of(Type)"/> rejects it otherwise. Properties without the
/// attribute fill the gaps. Thread safety: attributes are immutable.
/// </remarks>
/// <param name="offset">Byte offset from the start of the record.</param>
[AttributeUsage(AttributeTargets.Property, Inherited = false)]
public sealed class RecordOffsetAttribute(int offset) : Attribute
{
    /// <summary>Byte offset from the start of the record.</summary>
    public int Offset { get; } = offset;
}
