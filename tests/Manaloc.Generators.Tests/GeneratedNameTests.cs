namespace Manaloc.Generators.Tests;

/// <summary>
/// Interface property names that equal the generated handles' own names (their private fields, the module initializer,
/// the other handle's type), the global namespace, deep nesting, one name in two namespaces, empty and large records:
/// the generated code must compile.
/// </summary>
public class GeneratedNameTests
{
    [Theory]
    [InlineData("namespace N; [Manaloc.Memory.NativeRecord] public interface IF { int _handle { get; set; } int s_recordType { get; set; } int __RegisterNativeRecord { get; set; } }")]
    [InlineData("namespace N; [Manaloc.Memory.NativeRecord] public interface IF { int FRef { get; set; } int FUncheckedRef { get; set; } }")]
    [InlineData("[Manaloc.Memory.NativeRecord] public interface IF { int FRef { get; set; } int _handle { get; set; } }")]
    [InlineData("namespace N; [Manaloc.Memory.NativeRecord] public interface IF { int __Record { get; set; } int Handle { get; set; } int New { get; set; } }")]
    [InlineData("[Manaloc.Memory.NativeRecord] public interface IG { int A { get; set; } }")]
    [InlineData("namespace N; [Manaloc.Memory.NativeRecord] public interface IF { int IF_Checked { get; set; } int IF_UncheckedView { get; set; } }")]
    [InlineData("namespace A { [Manaloc.Memory.NativeRecord] public interface IX { int A { get; set; } } } namespace B { [Manaloc.Memory.NativeRecord] public interface IX { int A { get; set; } } }")]
    [InlineData("namespace N; public static class A { public static class B { public static class C { [Manaloc.Memory.NativeRecord] public interface IX { int A { get; set; } } } } }")]
    [InlineData("namespace N; [Manaloc.Memory.NativeRecord] public interface IEmpty { } [Manaloc.Memory.NativeRecord] public interface IHuge { [Manaloc.Memory.RecordOffset(100000)] long A { get; set; } }")]
    public void Unusual_names_and_places_generate_code_that_compiles(string source)
    {
        var result = GeneratorDriver.Run(source);
        Assert.Empty(result.GeneratorDiagnostics);
        Assert.Empty(result.CompilationErrors);
        Assert.NotEmpty(result.Sources);
    }

    [Theory]
    [InlineData("namespace N; public static class Outer { [Manaloc.Memory.NativeRecord] public interface IInner { int A { get; set; } } } [Manaloc.Memory.NativeRecord] public interface IOuterInner { int B { get; set; } }")]
    [InlineData("namespace N; [Manaloc.Memory.NativeRecord] public interface IXy { int A { get; set; } } [Manaloc.Memory.NativeRecord] public interface Xy { int A { get; set; } }")]
    [InlineData("namespace N; [Manaloc.Memory.NativeRecord] public interface IX { int A { get; set; } } [Manaloc.Memory.NativeRecord] public interface IXUnchecked { int A { get; set; } }")]
    public void Two_interfaces_with_the_same_handle_name_get_a_diagnostic_not_broken_code(string source)
    {
        var result = GeneratorDriver.Run(source);
        Assert.Empty(result.CompilationErrors); // the first keeps its handles, the second is refused, nothing is generated twice
        var diagnostic = Assert.Single(result.GeneratorDiagnostics);
        Assert.Equal("MNL014", diagnostic.Id);
        Assert.Contains("would have the name of", diagnostic.GetMessage(System.Globalization.CultureInfo.InvariantCulture));
        Assert.Equal("Snippet.cs", diagnostic.Location.GetLineSpan().Path); // the refused interface's file (a location kept as values)
        Assert.InRange(diagnostic.Location.SourceSpan.Start, 1, source.Length);
        Assert.Single(result.Sources);
    }
}
