namespace Manaloc.Tests.Pooling;

/// <summary>A pooled test object that knows whether it is out, and whether it was disposed.</summary>
public sealed class PooledThing : IDisposable
{
    private static int s_created;

    public int Id { get; } = Interlocked.Increment(ref s_created);
    public int Out;
    public bool Disposed { get; private set; }

    public void Dispose() => Disposed = true;
}
