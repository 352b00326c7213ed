using System.Diagnostics;
using System.Reflection;
using System.Reflection.Emit;
using Manaloc.Lab.Harness;
using Manaloc.Memory;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Writing a Manual Memory Manager in C#": the first New of a type waits for its
/// implementation to be generated; PreGenerate moves that wait ahead of time. Each sample uses a new
/// interface defined at run time (so it is truly unseen) with IFooData's four properties.
/// </summary>
public sealed class FirstUse : Experiment
{
    private const string Unseen = "New, unseen type";
    private const string PreGenerate = "PreGenerate";
    private const string AfterPreGenerate = "New after PreGenerate";
    private const string Warm = "New, warm type";

    private static readonly MethodInfo s_new = typeof(TypeAllocator).GetMethod(nameof(TypeAllocator.New))!;
    private static ModuleBuilder? s_module;
    private static int s_counter;

    /// <inheritdoc/>
    public override string Name => "first-use";
    /// <inheritdoc/>
    public override string Article => "Writing a Manual Memory Manager in C# (seed 000)";
    /// <inheritdoc/>
    public override string Description => "Milliseconds of the first New on a never-seen interface, with and without PreGenerate.";
    /// <inheritdoc/>
    public override ArticleFigure Figure => new("PreGenerate lets New skip code generation (the article compiled C# through CodeDOM per type; no time published)");
    /// <inheritdoc/>
    public override IReadOnlyList<string> Variants { get; } = [Unseen, PreGenerate, AfterPreGenerate, Warm];
    /// <inheritdoc/>
    public override string Baseline => Unseen;

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("types", "fresh interfaces generated per variant (one per sample)", [Samples(settings).ToString(System.Globalization.CultureInfo.InvariantCulture)]),
    ];

    private static int Samples(RunSettings s) => s.IsSmoke ? 2 : s.IsQuick ? 12 : 40;

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "first-use" });
        int samples = Samples(context.Settings);

        var (firstType, firstNew) = Prepare(allocator);
        double processFirst = Time(() => firstNew());
        context.Note($"The first generation in this process (emitter start-up and JIT included) took {processFirst:F2} ms; not counted below.");
        context.Note("PreGenerate on a checked allocator builds two implementations (the checked handle for New and the record-array view for NewArray), so it takes about twice one generation.");
        GC.KeepAlive(firstType);

        var unseen = new double[samples];
        var pre = new double[samples];
        var after = new double[samples];
        var warm = new double[samples];
        long generatedOnNew = 0;
        for (int i = 0; i < samples; i++)
        {
            context.Status($"type {i + 1}/{samples}");
            var (_, newUnseen) = Prepare(allocator);
            unseen[i] = Time(() => newUnseen());
            warm[i] = Time(() => newUnseen());

            var (type, newPrepared) = Prepare(allocator);
            pre[i] = Time(() => allocator.PreGenerate(type));
            long before = TypeAllocator.GeneratedTypeCount;
            after[i] = Time(() => newPrepared());
            generatedOnNew += TypeAllocator.GeneratedTypeCount - before;
        }
        var p = Parameters.Of(("types", samples));
        context.RecordSamples(Unseen, "ms", unseen, p);
        context.RecordSamples(PreGenerate, "ms", pre, p);
        context.RecordSamples(AfterPreGenerate, "ms", after, p, metrics: new Dictionary<string, double> { ["generatedOnNew"] = generatedOnNew });
        context.RecordSamples(Warm, "ms", warm, p);
        context.Note($"Implementations generated during New after PreGenerate: {generatedOnNew} (target 0).");
    }

    private static double Time(Action action)
    {
        long start = Stopwatch.GetTimestamp();
        action();
        return Stopwatch.GetElapsedTime(start).TotalMilliseconds;
    }

    /// <summary>A fresh public interface like IFooData and a delegate calling allocator.New of it.</summary>
    private static (Type Type, Func<object> New) Prepare(TypeAllocator allocator)
    {
        Type type;
        lock (s_new)
        {
            s_module ??= AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("Manaloc.Lab.FirstUse"), AssemblyBuilderAccess.Run).DefineDynamicModule("Manaloc.Lab.FirstUse");
            var tb = s_module.DefineType($"FirstUse.IFooData{++s_counter}", TypeAttributes.Public | TypeAttributes.Interface | TypeAttributes.Abstract);
            const MethodAttributes accessor = MethodAttributes.Public | MethodAttributes.Abstract | MethodAttributes.Virtual | MethodAttributes.HideBySig | MethodAttributes.NewSlot | MethodAttributes.SpecialName;
            foreach (var (name, t) in new[] { ("Bar", typeof(int)), ("Jar", typeof(long)), ("Car", typeof(double)), ("Tar", typeof(byte)) })
            {
                var pb = tb.DefineProperty(name, PropertyAttributes.None, t, Type.EmptyTypes);
                pb.SetGetMethod(tb.DefineMethod("get_" + name, accessor, t, Type.EmptyTypes));
                pb.SetSetMethod(tb.DefineMethod("set_" + name, accessor, typeof(void), [t]));
            }
            type = tb.CreateType();
        }
        var method = s_new.MakeGenericMethod(type);
        var create = (Func<object>)Delegate.CreateDelegate(typeof(Func<object>), allocator, method);
        return (type, create);
    }

    /// <inheritdoc/>
    public override VerdictResult Judge(IReadOnlyList<Measurement> measurements)
    {
        var unseen = measurements.FirstOrDefault(m => m.Variant == Unseen);
        var after = measurements.FirstOrDefault(m => m.Variant == AfterPreGenerate);
        if (unseen is null || after is null) return new(Verdict.NotComparable, "Not measured.");
        double ratio = unseen.Statistics.Median / after.Statistics.Median;
        double generated = after.Metrics.GetValueOrDefault("generatedOnNew");
        var verdict = ratio >= 2 && generated == 0 ? Verdict.Holds : Verdict.Shrinks;
        return new(verdict,
            $"First New on an unseen type: median {unseen.Statistics.Median:F3} ms, max {unseen.Statistics.Max:F3} ms; after PreGenerate: {after.Statistics.Median:F4} ms ({Format.Ratio(ratio)} faster), {generated} generations on New.",
            ratio, "x")
        {
            Targets =
            [
                TargetResult.AtMost("first New of an unseen type (slowest sample)", unseen.Statistics.Max, 5, "ms"),
                TargetResult.AtMost("implementations generated by New after PreGenerate", generated, 0, "generations"),
            ],
        };
    }
}
