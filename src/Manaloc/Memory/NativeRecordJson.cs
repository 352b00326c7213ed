using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// System.Text.Json and records: the resolver that lets a source-generated <c>JsonSerializerContext</c> (NativeAOT) write a
/// record whose declared type is <c>object</c> or its interface's run-time class, as reflection already does.
/// </summary>
/// <remarks>
/// <para>Reflection-based serialization needs nothing: every record class carries
/// <see cref="NativeRecordJsonConverter"/> as its converter, which writes the record as its interface. A source-generated
/// context knows only the types it lists, and a record's run-time class is generated (users cannot name it), so
/// <c>JsonSerializer.Serialize((object)record, options)</c> or an endpoint returning a record would find no contract for
/// it. Add <see cref="TypeInfoResolver"/> after the context:
/// <c>options.TypeInfoResolverChain.Add(NativeRecordJson.TypeInfoResolver)</c> (for ASP.NET Core:
/// <c>ConfigureHttpJsonOptions</c>), and list the record interfaces in the context
/// (<c>[JsonSerializable(typeof(IProduct))]</c>): the record's data is then written from the context's contract for the
/// interface.</para>
/// <para>The resolver answers only for record classes (and <see cref="NativeRecord"/> itself); for any other type it
/// returns null, so the next resolver in the chain is asked. It needs no dynamic code for <see cref="NativeRecordAttribute"/>
/// records (their generated code makes the contract); the emitted classes of unmarked interfaces exist only where dynamic
/// code is supported. Thread-safe, stateless.</para>
/// </remarks>
public static class NativeRecordJson
{
    /// <summary>Gives System.Text.Json the contract of a record's run-time class; null for every other type.</summary>
    public static IJsonTypeInfoResolver TypeInfoResolver { get; } = new Resolver();

    /// <summary>The contract of the record class <typeparamref name="TRecord"/>: written by <see cref="NativeRecordJsonConverter"/>.</summary>
    internal static JsonTypeInfo ContractOf<TRecord>(JsonSerializerOptions options) where TRecord : NativeRecord
        => JsonMetadataServices.CreateValueInfo<TRecord>(options, NativeRecordJsonConverter.Instance);

    private sealed class Resolver : IJsonTypeInfoResolver
    {
        public JsonTypeInfo? GetTypeInfo(Type type, JsonSerializerOptions options)
        {
            ArgumentNullException.ThrowIfNull(type);
            ArgumentNullException.ThrowIfNull(options);
            if (!typeof(NativeRecord).IsAssignableFrom(type)) return null;
            if (type == typeof(NativeRecord)) return ContractOf<NativeRecord>(options);
            if (type == typeof(NativeRecordView)) return ContractOf<NativeRecordView>(options);
            if (type == typeof(CompiledRecord)) return ContractOf<CompiledRecord>(options);
            if (type == typeof(CompiledRecordView)) return ContractOf<CompiledRecordView>(options);
            if (!RecordTypes.TryOfGenerated(type, out var record)) return null;
            if (RecordTypes.CompiledOf(record.Interface) is { } compiled) return compiled.ContractOf(type, options);
            return RuntimeFeature.IsDynamicCodeSupported ? EmittedContract(type, options) : null;
        }

        // An emitted class exists only where dynamic code is supported (RecordTypes.ResolveForNew refuses to emit otherwise),
        // and it is a reference type, so the instantiation shares code the runtime already has.
        [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Emitted record classes exist only where RuntimeFeature.IsDynamicCodeSupported is true.")]
        [UnconditionalSuppressMessage("Trimming", "IL2060", Justification = "ContractOf is referenced here, so it is kept; its one type argument is the emitted class.")]
        private static JsonTypeInfo EmittedContract(Type type, JsonSerializerOptions options)
            => (JsonTypeInfo)s_contractOf.MakeGenericMethod(type).Invoke(null, [options])!;

        private static readonly MethodInfo s_contractOf = typeof(NativeRecordJson).GetMethod(nameof(ContractOf), BindingFlags.Static | BindingFlags.NonPublic)!;
    }
}
