namespace Manaloc.Pooling;

/// <summary>Creates with <c>new T()</c>; keeps everything.</summary>
internal sealed class NewPolicy<T> : PoolPolicy<T> where T : class, new()
{
    public static readonly NewPolicy<T> Instance = new();

    public override T Create() => new();

    internal override bool ResetsObjects => false;
}
