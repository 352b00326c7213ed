using System;
using System.Linq;
using Microsoft.CodeAnalysis;

namespace Manaloc.Generators;

/// <summary>
/// Size and natural alignment of an unmanaged value type on a 64-bit runtime, as the run-time path
/// computes them (<c>RuntimeHelpers.SizeOf</c> and <c>TypeLayout.AlignmentOf</c>): primitives up to 8,
/// Int128 16, enums as their underlying type, a fixed table of System structs (reference assemblies
/// hide their real fields), and sequential or explicit structs from their fields.
/// </summary>
/// <remarks>The registration checks every size against the runtime again (a 32-bit process or a wrong
/// table entry fails at module load with a clear message, never with a wrong offset).</remarks>
internal static class ValueLayout
{
    /// <summary>How deep struct fields are followed (the run-time walk's limit).</summary>
    private const int MaxDepth = 32;

    /// <summary>A type's size and alignment, or why it is refused.</summary>
    /// <param name="Size">Bytes the value occupies.</param>
    /// <param name="Alignment">Natural alignment.</param>
    /// <param name="Error">Why the type is refused (null when accepted).</param>
    /// <param name="UnknownLayout">The type may be unmanaged but its layout cannot be computed here (MNL013 rather than MNL007).</param>
    public readonly record struct Result(int Size, int Alignment, string? Error, bool UnknownLayout);

    private static Result Ok(int size, int alignment) => new(size, alignment, null, false);
    private static Result Refuse(string why) => new(0, 0, why, false);
    private static Result Unknown(string why) => new(0, 0, why, true);

    public static Result Of(ITypeSymbol type) => Of(type, 0);

    private static Result Of(ITypeSymbol type, int depth)
    {
        if (depth > MaxDepth) return Unknown($"structs nested deeper than {MaxDepth}");
        if (type is IPointerTypeSymbol or IFunctionPointerTypeSymbol) return Refuse("a pointer type (use nint)");
        if (type.TypeKind == TypeKind.TypeParameter) return Refuse("an open type parameter");
        if (!type.IsValueType) return Refuse("a reference type");
        if (type.IsRefLikeType) return Refuse("a ref struct");
        if (!type.IsUnmanagedType) return Refuse("a struct that contains a reference");
        if (type is INamedTypeSymbol { TypeKind: TypeKind.Enum, EnumUnderlyingType: { } underlying }) return Of(underlying, depth + 1);

        switch (type.SpecialType)
        {
            case SpecialType.System_Boolean:
            case SpecialType.System_SByte:
            case SpecialType.System_Byte: return Ok(1, 1);
            case SpecialType.System_Char:
            case SpecialType.System_Int16:
            case SpecialType.System_UInt16: return Ok(2, 2);
            case SpecialType.System_Int32:
            case SpecialType.System_UInt32:
            case SpecialType.System_Single: return Ok(4, 4);
            case SpecialType.System_Int64:
            case SpecialType.System_UInt64:
            case SpecialType.System_Double:
            case SpecialType.System_IntPtr:
            case SpecialType.System_UIntPtr:
            case SpecialType.System_DateTime: return Ok(8, 8);
            case SpecialType.System_Decimal: return Ok(16, 8);
        }

        var named = (INamedTypeSymbol)type;
        if (named.OriginalDefinition.SpecialType == SpecialType.System_Nullable_T)
        {
            // struct Nullable<T> { bool hasValue; T value; }: sequential, T aligned after the bool.
            var inner = Of(named.TypeArguments[0], depth + 1);
            if (inner.Error is not null) return inner;
            return Ok(AlignUp(1, inner.Alignment) + inner.Size, inner.Alignment);
        }
        string name = FullName(named.OriginalDefinition);
        switch (name)
        {
            case "System.Int128":
            case "System.UInt128": return Ok(16, 16);
            case "System.Guid": return Ok(16, 4);
            case "System.TimeSpan":
            case "System.TimeOnly": return Ok(8, 8);
            case "System.DateTimeOffset": return Ok(16, 8);
            case "System.DateOnly": return Ok(4, 4);
            case "System.Half": return Ok(2, 2);
            case "System.Numerics.Vector2": return Ok(8, 4);
            case "System.Numerics.Vector3": return Ok(12, 4);
            case "System.Numerics.Vector4":
            case "System.Numerics.Quaternion": return Ok(16, 4);
            case "System.Numerics.Complex": return Ok(16, 8);
            case "System.Runtime.Intrinsics.Vector64`1": return Ok(8, 8);
            case "System.Runtime.Intrinsics.Vector128`1": return Ok(16, 8);
            case "System.Runtime.Intrinsics.Vector256`1": return Ok(32, 8);
        }
        if (IsFrameworkAssembly(named.ContainingAssembly))
        {
            return Unknown("a framework struct: its reference assembly does not show its fields");
        }
        return OfStruct(named, depth);
    }

    private static Result OfStruct(INamedTypeSymbol type, int depth)
    {
        // [StructLayout] is a pseudo-attribute: Roslyn shows it on types declared in source only. A metadata struct is
        // taken as sequential with default packing; the registration's size check catches a mismatch at load.
        int kind = 0; // LayoutKind.Sequential
        int pack = 0, declaredSize = 0;
        foreach (var attribute in type.GetAttributes())
        {
            if (attribute.AttributeClass is null || FullName(attribute.AttributeClass) != "System.Runtime.InteropServices.StructLayoutAttribute") continue;
            if (attribute.ConstructorArguments.Length == 1 && attribute.ConstructorArguments[0].Value is int k) kind = k;
            foreach (var named in attribute.NamedArguments)
            {
                if (named.Key == "Pack" && named.Value.Value is int p) pack = p;
                if (named.Key == "Size" && named.Value.Value is int s) declaredSize = s;
            }
        }
        if (kind == 3) return Unknown("LayoutKind.Auto: the runtime orders its fields");
        bool explicitLayout = kind == 2;

        int alignment = 1;
        long offset = 0, end = 0;
        foreach (var field in type.GetMembers().OfType<IFieldSymbol>().Where(f => !f.IsStatic))
        {
            Result f;
            if (field.IsFixedSizeBuffer && field.Type is IPointerTypeSymbol element)
            {
                var e = Of(element.PointedAtType, depth + 1);
                if (e.Error is not null) return e;
                f = Ok(e.Size * field.FixedSize, e.Alignment);
            }
            else
            {
                f = Of(field.Type, depth + 1);
                if (f.Error is not null) return f;
            }
            int fieldAlignment = pack > 0 ? Math.Min(f.Alignment, pack) : f.Alignment;
            alignment = Math.Max(alignment, fieldAlignment);
            if (explicitLayout)
            {
                var at = field.GetAttributes().FirstOrDefault(a => a.AttributeClass is { } c && FullName(c) == "System.Runtime.InteropServices.FieldOffsetAttribute");
                if (at is null || at.ConstructorArguments.Length != 1 || at.ConstructorArguments[0].Value is not int fixedAt)
                {
                    return Unknown($"explicit layout without a readable [FieldOffset] on {field.Name}");
                }
                end = Math.Max(end, (long)fixedAt + f.Size);
            }
            else
            {
                offset = AlignUp(offset, fieldAlignment) + f.Size;
                end = offset;
            }
        }
        long size = Math.Max(AlignUp(end, alignment), 1);
        if (declaredSize > size) size = declaredSize;
        if (size > int.MaxValue) return Unknown("larger than 2 GB");
        return Ok((int)size, alignment);
    }

    private static bool IsFrameworkAssembly(IAssemblySymbol? assembly)
    {
        if (assembly is null) return false;
        string name = assembly.Name;
        return name == "mscorlib" || name == "netstandard" || name.StartsWith("System.", StringComparison.Ordinal) || name == "System"
            || name.StartsWith("Microsoft.", StringComparison.Ordinal);
    }

    public static string FullName(INamedTypeSymbol type)
    {
        string ns = type.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        string outer = "";
        for (var t = type.ContainingType; t is not null; t = t.ContainingType) outer = t.MetadataName + "." + outer;
        return ns + outer + type.MetadataName;
    }

    public static long AlignUp(long value, int alignment) => (value + alignment - 1) / alignment * alignment;

    public static int AlignUp(int value, int alignment) => (value + alignment - 1) / alignment * alignment;
}
