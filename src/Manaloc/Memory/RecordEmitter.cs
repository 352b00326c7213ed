using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Reflection.Emit;
using System.Text;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// Emits, with Reflection.Emit (no compiler at run time), a sealed class per interface and mode:
/// <c>sealed class IFoo_Record : NativeRecord, IFoo</c> whose accessors are constant-offset loads and
/// stores from <see cref="NativeRecord.Address"/>, preceded in <see cref="RecordMode.Checked"/> by a compare
/// of the record's stamp with the handle's generation, in <see cref="RecordMode.CheckedView"/> by a null
/// test of the address (a record array's Dispose and the allocator's null it) and in <see cref="RecordMode.CheckedItem"/>
/// by a compare of the array chunk's stamp with the item's generation.
/// </summary>
/// <remarks>
/// All types live in one run-only dynamic assembly that declares
/// <c>IgnoresAccessChecksToAttribute("Manaloc")</c> (the mechanism DispatchProxy uses), so the
/// generated code reads NativeRecord's internal fields directly and users cannot derive from
/// NativeRecord themselves. ModuleBuilder is not thread-safe: emission runs under <c>s_lock</c>.
/// </remarks>
internal static class RecordEmitter
{
    private static readonly object s_lock = new();
    private static ModuleBuilder? s_module;
    private static int s_counter;

    private static readonly FieldInfo s_address = Field(nameof(NativeRecord.Address));
    private static readonly FieldInfo s_generation = Field(nameof(NativeRecord.Generation));
    private static readonly FieldInfo s_chunk = typeof(NativeRecordView).GetField(nameof(NativeRecordView.Chunk), BindingFlags.Instance | BindingFlags.NonPublic)!;
    private static readonly FieldInfo s_dedicatedStamp = typeof(SlabChunk).GetField(nameof(SlabChunk.DedicatedStamp), BindingFlags.Instance | BindingFlags.Public)!;
    private static readonly MethodInfo s_keepAlive = typeof(GC).GetMethod(nameof(GC.KeepAlive))!;
    // Names a generated public property must not take: NativeRecord's and object's public members.
    private static readonly HashSet<string> s_reserved = typeof(NativeRecord).GetMembers(BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static).Select(m => m.Name).ToHashSet(StringComparer.Ordinal);
    private static readonly MethodInfo s_staleException = typeof(NativeRecord).GetMethod(nameof(NativeRecord.StaleException), BindingFlags.Instance | BindingFlags.NonPublic)!;
    private static readonly ConstructorInfo s_baseConstructor = typeof(NativeRecord).GetConstructor(BindingFlags.Instance | BindingFlags.NonPublic, Type.EmptyTypes)!;
    private static readonly ConstructorInfo s_viewBaseConstructor = typeof(NativeRecordView).GetConstructor(BindingFlags.Instance | BindingFlags.NonPublic, Type.EmptyTypes)!;

    private static FieldInfo Field(string name) => typeof(NativeRecord).GetField(name, BindingFlags.Instance | BindingFlags.NonPublic)!;

    [RequiresDynamicCode("Emits the implementation with Reflection.Emit.")]
    [RequiresUnreferencedCode("Implements the interface's properties found through reflection.")]
    public static (Type Generated, nint Create) Emit(TypeLayout layout, RecordMode mode)
    {
        lock (s_lock)
        {
            var module = s_module ??= CreateModule();
            var iface = layout.Type;
            string name = $"Manaloc.Generated.{Sanitize(RecordTypes.TypeName(iface))}_{mode}_{++s_counter}";
            // A view or item (of a record array) keeps its array's chunk: its class derives from NativeRecordView; a handle holds no reference.
            bool isView = mode is RecordMode.CheckedView or RecordMode.UncheckedView or RecordMode.CheckedItem;
            var tb = module.DefineType(name, TypeAttributes.Public | TypeAttributes.Sealed | TypeAttributes.Class | TypeAttributes.BeforeFieldInit, isView ? typeof(NativeRecordView) : typeof(NativeRecord));
            tb.AddInterfaceImplementation(iface);
            // System.Text.Json reads a converter attribute on the run-time type itself (not inherited): the record is written
            // as its interface (NativeRecordJsonConverter), whatever the declared type.
            var converterAttribute = typeof(System.Text.Json.Serialization.JsonConverterAttribute).GetConstructor([typeof(Type)])!;
            tb.SetCustomAttribute(new CustomAttributeBuilder(converterAttribute, [typeof(CompilerServices.NativeRecordJsonConverter)]));

            // Private: only Create (same type) constructs; users cannot make an unbound handle with Activator.
            var ctor = tb.DefineConstructor(MethodAttributes.Private | MethodAttributes.HideBySig | MethodAttributes.SpecialName | MethodAttributes.RTSpecialName, CallingConventions.Standard, Type.EmptyTypes);
            var il = ctor.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Call, isView ? s_viewBaseConstructor : s_baseConstructor);
            il.Emit(OpCodes.Ret);

            var create = tb.DefineMethod("Create", MethodAttributes.Public | MethodAttributes.Static | MethodAttributes.HideBySig, typeof(NativeRecord), Type.EmptyTypes);
            il = create.GetILGenerator();
            il.Emit(OpCodes.Newobj, ctor);
            il.Emit(OpCodes.Ret);

            int stampOffset = RecordType.StampOffsetOf(layout);
            foreach (var field in layout.Fields)
            {
                for (int i = 0; i < field.Properties.Count; i++)
                {
                    // The first declaration of a field whose name is its own (not ambiguous between two interfaces) is also a
                    // public property of the class, so a serializer that reflects over the object (System.Text.Json given
                    // it as object) finds the record's data; the others are explicit implementations only.
                    var property = field.Properties[i];
                    bool isPublic = i == 0 && field.Name == property.Name && !s_reserved.Contains(property.Name);
                    EmitProperty(tb, property, field.Offset, mode, stampOffset, isPublic);
                }
            }

            var generated = tb.CreateType();
            // The stable entry point (it follows tiering), called with calli.
            nint factory = generated.GetMethod("Create", BindingFlags.Public | BindingFlags.Static)!.MethodHandle.GetFunctionPointer();
            return (generated, factory);
        }
    }

    [RequiresDynamicCode("Emits the implementation with Reflection.Emit.")]
    private static void EmitProperty(TypeBuilder tb, PropertyInfo property, int offset, RecordMode mode, int stampOffset, bool isPublic)
    {
        string qualified = $"{Sanitize(RecordTypes.TypeName(property.DeclaringType!))}.{property.Name}";
        string name = isPublic ? property.Name : qualified;
        var pb = tb.DefineProperty(name, PropertyAttributes.None, property.PropertyType, Type.EmptyTypes);
        MethodAttributes accessor = (isPublic ? MethodAttributes.Public : MethodAttributes.Private) | MethodAttributes.HideBySig | MethodAttributes.NewSlot
            | MethodAttributes.Virtual | MethodAttributes.Final | MethodAttributes.SpecialName;
        if (property.GetMethod is { } getter)
        {
            var mb = tb.DefineMethod(isPublic ? $"get_{property.Name}" : $"{qualified}.get", accessor, property.PropertyType, Type.EmptyTypes);
            mb.SetImplementationFlags(MethodImplAttributes.AggressiveInlining);
            var il = mb.GetILGenerator();
            EmitAddress(il, offset, mode, stampOffset);
            il.Emit(OpCodes.Ldobj, property.PropertyType);
            EmitKeepAlive(il);
            il.Emit(OpCodes.Ret);
            tb.DefineMethodOverride(mb, getter);
            pb.SetGetMethod(mb);
        }
        if (property.SetMethod is { } setter)
        {
            var mb = tb.DefineMethod(isPublic ? $"set_{property.Name}" : $"{qualified}.set", accessor, typeof(void), [property.PropertyType]);
            mb.SetImplementationFlags(MethodImplAttributes.AggressiveInlining);
            var il = mb.GetILGenerator();
            EmitAddress(il, offset, mode, stampOffset);
            il.Emit(OpCodes.Ldarg_1);
            il.Emit(OpCodes.Stobj, property.PropertyType);
            EmitKeepAlive(il);
            il.Emit(OpCodes.Ret);
            tb.DefineMethodOverride(mb, setter);
            pb.SetSetMethod(mb);
        }
    }

    // GC.KeepAlive(this) after the access (a JIT intrinsic: no call): the object stays reachable until the load or store is
    // done, not only until Address was read; for a record array's view that keeps the array's memory (its chunk) alive.
    private static void EmitKeepAlive(ILGenerator il)
    {
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Call, s_keepAlive);
    }

    // throw this.StaleException(); — a block ending in throw, which the JIT keeps out of the hot path
    private static void EmitThrowStale(ILGenerator il)
    {
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Call, s_staleException);
        il.Emit(OpCodes.Throw);
    }

    // The field's address, this.Address + offset, after the mode's check:
    //   Checked:            byte* a = this.Address; if (*(uint*)(a + stampOffset) != this.Generation) throw ...; a + offset
    //   CheckedView:        byte* a = this.Address; if (a == null) throw ...; a + offset
    //   CheckedItem:        if (this.Chunk.DedicatedStamp != this.Generation) throw ...; this.Address + offset
    //   Unchecked(View):    this.Address + offset
    private static void EmitAddress(ILGenerator il, int offset, RecordMode mode, int stampOffset)
    {
        if (mode == RecordMode.CheckedItem)
        {
            var ok = il.DefineLabel();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldfld, s_chunk);
            il.Emit(OpCodes.Ldfld, s_dedicatedStamp);
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldfld, s_generation);
            il.Emit(OpCodes.Beq_S, ok);
            EmitThrowStale(il);
            il.MarkLabel(ok);
        }
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Ldfld, s_address);
        if (mode == RecordMode.Checked)
        {
            var address = il.DeclareLocal(typeof(byte*));
            var ok = il.DefineLabel();
            il.Emit(OpCodes.Stloc, address);
            il.Emit(OpCodes.Ldloc, address);
            il.Emit(OpCodes.Ldc_I4, stampOffset);
            il.Emit(OpCodes.Add);
            il.Emit(OpCodes.Ldind_U4);
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldfld, s_generation);
            il.Emit(OpCodes.Beq_S, ok);
            EmitThrowStale(il);
            il.MarkLabel(ok);
            il.Emit(OpCodes.Ldloc, address);
        }
        else if (mode == RecordMode.CheckedView)
        {
            var address = il.DeclareLocal(typeof(byte*));
            var ok = il.DefineLabel();
            il.Emit(OpCodes.Stloc, address);
            il.Emit(OpCodes.Ldloc, address);
            il.Emit(OpCodes.Brtrue_S, ok);
            EmitThrowStale(il);
            il.MarkLabel(ok);
            il.Emit(OpCodes.Ldloc, address);
        }
        if (offset != 0)
        {
            il.Emit(OpCodes.Ldc_I4, offset);
            il.Emit(OpCodes.Add);
        }
    }

    [RequiresDynamicCode("Emits the implementation with Reflection.Emit.")]
    private static ModuleBuilder CreateModule()
    {
        var assembly = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("Manaloc.Generated"), AssemblyBuilderAccess.Run);
        var module = assembly.DefineDynamicModule("Manaloc.Generated");

        // [assembly: IgnoresAccessChecksTo("Manaloc")]: honoured by the runtime for dynamic assemblies.
        var attribute = module.DefineType("System.Runtime.CompilerServices.IgnoresAccessChecksToAttribute",
            TypeAttributes.Public | TypeAttributes.Sealed | TypeAttributes.Class, typeof(Attribute));
        var attributeCtor = attribute.DefineConstructor(MethodAttributes.Public | MethodAttributes.HideBySig | MethodAttributes.SpecialName | MethodAttributes.RTSpecialName,
            CallingConventions.Standard, [typeof(string)]);
        var il = attributeCtor.GetILGenerator();
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Call, typeof(Attribute).GetConstructor(BindingFlags.Instance | BindingFlags.NonPublic, Type.EmptyTypes)!);
        il.Emit(OpCodes.Ret);
        var attributeType = attribute.CreateType();
        assembly.SetCustomAttribute(new CustomAttributeBuilder(attributeType.GetConstructor([typeof(string)])!, [typeof(NativeRecord).Assembly.GetName().Name!]));
        return module;
    }

    private static string Sanitize(string name)
    {
        var sb = new StringBuilder(name.Length);
        foreach (char c in name) sb.Append(char.IsLetterOrDigit(c) || c == '_' ? c : '_');
        return sb.ToString();
    }
}
