using Microsoft.CodeAnalysis;
using System.Globalization;

namespace Manaloc.Generators.Tests;

/// <summary>
/// A user's type with a generated handle's name (XxxRef or XxxUncheckedRef) in the interface's namespace: the record is refused
/// with MNL016 on the interface and nothing is generated, so the user's build shows that one error and no duplicate-type
/// error (CS0101/CS0260) pointing at the user's own code.
/// </summary>
public class HandleNameClashTests
{
    [Theory]
    [InlineData("public struct ClashRef { }", "struct")]
    [InlineData("public readonly struct ClashUncheckedRef { }", "struct")]
    [InlineData("public class ClashRef { }", "class")]
    [InlineData("internal sealed class ClashRef { }", "class")]
    [InlineData("public enum ClashRef { A }", "enum")]
    [InlineData("public delegate int ClashUncheckedRef(int a);", "delegate")]
    [InlineData("public record struct ClashRef(int A);", "struct")]
    public void A_type_with_a_handle_name_in_the_same_namespace_refuses_the_record_with_MNL016_only(string declaration, string kind)
    {
        var result = GeneratorDriver.Run($$"""
            namespace App;
            {{declaration}}
            [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } }
            """);

        var diagnostic = Assert.Single(result.GeneratorDiagnostics);
        Assert.Equal("MNL016", diagnostic.Id);
        string message = diagnostic.GetMessage(CultureInfo.InvariantCulture);
        Assert.Contains("'App.IClash' cannot be a native record here", message);
        Assert.Contains($"the existing {kind} 'App.Clash", message);
        Assert.Contains("rename the interface or that type", message);
        Assert.Equal("IClash", result.Output.SyntaxTrees.First().GetText().ToString(diagnostic.Location.SourceSpan));
        Assert.Empty(result.Sources);
        Assert.Empty(result.CompilationErrors); // no CS0101/CS0260 at the user's type
    }

    [Theory]
    [InlineData("namespace Other { public struct ClashRef { } } namespace App { [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } } }")]
    [InlineData("namespace App { public static class Holder { public struct ClashRef { } } [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } } }")]
    [InlineData("namespace App { public struct ClashRef<T> { } [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } } }")]
    [InlineData("namespace App { public struct IClashRef { } [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } } }")]
    public void A_type_of_that_name_elsewhere_or_generic_is_no_clash(string source)
    {
        var result = GeneratorDriver.Run(source);
        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.CompilationErrors);
        Assert.Contains(result.Sources, s => s.Contains("partial struct ClashRef", StringComparison.Ordinal));
    }

    [Fact]
    public void A_clashing_type_added_later_in_another_file_is_reported_on_the_next_run()
    {
        // The IDE's case: the generator's cached step must not keep generating the handle once the user's type appears.
        var parseOptions = new Microsoft.CodeAnalysis.CSharp.CSharpParseOptions(Microsoft.CodeAnalysis.CSharp.LanguageVersion.Preview);
        var compilation = GeneratorDriver.Compile("namespace App; [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } }", parseOptions);
        Microsoft.CodeAnalysis.GeneratorDriver driver = Microsoft.CodeAnalysis.CSharp.CSharpGeneratorDriver.Create([new NativeRecordGenerator().AsSourceGenerator()], parseOptions: parseOptions);
        driver = driver.RunGenerators(compilation);
        Assert.Empty(driver.GetRunResult().Diagnostics);
        Assert.Single(driver.GetRunResult().GeneratedTrees);

        driver = driver.RunGenerators(compilation.AddSyntaxTrees(Microsoft.CodeAnalysis.CSharp.CSharpSyntaxTree.ParseText("namespace App; public struct ClashRef { }", parseOptions)));
        Assert.Equal("MNL016", Assert.Single(driver.GetRunResult().Diagnostics).Id);
        Assert.Empty(driver.GetRunResult().GeneratedTrees);
    }

    [Fact]
    public void A_partial_struct_of_the_handle_name_extends_the_generated_handle()
    {
        var result = GeneratorDriver.Run("""
            namespace App;
            [Manaloc.Memory.NativeRecord] public interface IOrder { decimal Price { get; set; } int Quantity { get; set; } }
            public readonly partial struct OrderRef { public decimal Total => Price * Quantity; }
            """);
        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.CompilationErrors);
        Assert.Single(result.Sources);
    }

    [Fact]
    public void A_type_of_that_name_in_a_referenced_assembly_refuses_the_record_too()
    {
        var library = GeneratorDriver.Compile("namespace App { public struct ClashRef { } }", new Microsoft.CodeAnalysis.CSharp.CSharpParseOptions(), assemblyName: "Library");
        using var image = new MemoryStream();
        Assert.True(library.Emit(image).Success);
        var result = GeneratorDriver.Run("namespace App { [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } } }",
            references: [Microsoft.CodeAnalysis.MetadataReference.CreateFromImage(image.ToArray())]);
        Assert.Equal("MNL016", Assert.Single(result.GeneratorDiagnostics).Id);
        Assert.Empty(result.Sources);
    }

    [Fact]
    public void An_internal_type_of_that_name_in_a_referenced_assembly_is_no_clash()
    {
        // Invisible to this compilation, so the generated handle does not collide with it.
        var library = GeneratorDriver.Compile("namespace App { internal struct ClashRef { } }", new Microsoft.CodeAnalysis.CSharp.CSharpParseOptions(), assemblyName: "Library");
        using var image = new MemoryStream();
        Assert.True(library.Emit(image).Success);
        var result = GeneratorDriver.Run("namespace App { [Manaloc.Memory.NativeRecord] public interface IClash { int A { get; set; } } }",
            references: [Microsoft.CodeAnalysis.MetadataReference.CreateFromImage(image.ToArray())]);
        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.CompilationErrors);
        Assert.Single(result.Sources);
    }
}
