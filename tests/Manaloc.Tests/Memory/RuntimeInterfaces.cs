using System.Reflection;
using System.Reflection.Emit;

namespace Manaloc.Tests.Memory;

/// <summary>Defines public interfaces at run time (for never-seen types and randomized property sets).</summary>
internal static class RuntimeInterfaces
{
    private static readonly object s_lock = new();
    private static ModuleBuilder? s_module;
    private static int s_counter;

    public static Type Define(IReadOnlyList<(string Name, Type Type, bool Get, bool Set)> properties, Type[]? bases = null)
    {
        lock (s_lock)
        {
            s_module ??= AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("Manaloc.Tests.RuntimeInterfaces"), AssemblyBuilderAccess.Run)
                .DefineDynamicModule("Manaloc.Tests.RuntimeInterfaces");
            var tb = s_module.DefineType($"Runtime.IRecord{++s_counter}", TypeAttributes.Public | TypeAttributes.Interface | TypeAttributes.Abstract, null, bases ?? Type.EmptyTypes);
            const MethodAttributes accessor = MethodAttributes.Public | MethodAttributes.Abstract | MethodAttributes.Virtual | MethodAttributes.HideBySig | MethodAttributes.NewSlot | MethodAttributes.SpecialName;
            foreach (var (name, type, get, set) in properties)
            {
                var pb = tb.DefineProperty(name, PropertyAttributes.None, type, Type.EmptyTypes);
                if (get) pb.SetGetMethod(tb.DefineMethod("get_" + name, accessor, type, Type.EmptyTypes));
                if (set) pb.SetSetMethod(tb.DefineMethod("set_" + name, accessor, typeof(void), [type]));
            }
            return tb.CreateType();
        }
    }

    public static Type DefineUnseen() => Define([("A", typeof(int), true, true), ("B", typeof(double), true, true)]);
}
