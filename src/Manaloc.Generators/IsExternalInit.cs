namespace System.Runtime.CompilerServices;

/// <summary>Lets netstandard2.0 code declare records (init accessors); the compiler looks this type up by name.</summary>
internal static class IsExternalInit
{
}
