namespace Manaloc.Pooling;

/// <summary>A policy over two delegates.</summary>
internal sealed class DelegatePoolPolicy<T>(Func<T> create, Func<T, bool>? reset) : PoolPolicy<T> where T : class
{
    public override T Create() => create() ?? throw new InvalidOperationException("The pool policy's create delegate returned null.");

    public override bool Return(T item) => reset is null || reset(item);

    internal override bool ResetsObjects => reset is not null;
}
