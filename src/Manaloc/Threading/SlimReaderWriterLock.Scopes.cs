namespace Manaloc.Threading;

/// <summary><c>using</c>-friendly scopes over the enter/exit pairs.</summary>
public sealed partial class SlimReaderWriterLock
{
    /// <summary>Takes a read lock released when the returned scope is disposed: <c>using (rw.EnterReadScope()) { … }</c>.</summary>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public ReadScope EnterReadScope()
    {
        EnterReadLock();
        return new ReadScope(this);
    }

    /// <summary>Takes the write lock, released when the returned scope is disposed.</summary>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public WriteScope EnterWriteScope()
    {
        EnterWriteLock();
        return new WriteScope(this);
    }

    /// <summary>A held read lock; disposing it releases the lock.</summary>
    /// <remarks>A ref struct: it cannot escape the method (or cross an await) that took the lock.</remarks>
    public readonly ref struct ReadScope
    {
        private readonly SlimReaderWriterLock _owner;

        internal ReadScope(SlimReaderWriterLock owner) => _owner = owner;

        /// <summary>Releases the read lock.</summary>
        public void Dispose() => _owner?.ExitReadLock();
    }

    /// <summary>A held write lock; disposing it releases the lock.</summary>
    /// <remarks>A ref struct: it cannot escape the method (or cross an await) that took the lock.</remarks>
    public readonly ref struct WriteScope
    {
        private readonly SlimReaderWriterLock _owner;

        internal WriteScope(SlimReaderWriterLock owner) => _owner = owner;

        /// <summary>Releases the write lock.</summary>
        public void Dispose() => _owner?.ExitWriteLock();
    }
}
