using System.Runtime.CompilerServices;
using Manaloc.Diagnostics;

namespace Manaloc.Pooling;

/// <summary>
/// Debug mode: remembers, weakly, every object a pool handed out and whether it is out now, so a
/// double return and a foreign return are caught.
/// </summary>
/// <remarks>
/// Memory ordering: the state of one object is flipped with <see cref="Interlocked.Exchange(ref int, int)"/>,
/// so two threads returning the same object at once see exactly one success. The table is weak, so a
/// renter that never returns does not leak through it. Thread safety: safe from any thread.
/// </remarks>
/// <param name="poolName">The pool's name (event text).</param>
/// <param name="pool">The pool as messages name it: <c>SemiLocalPool&lt;Order&gt; 'orders'</c>.</param>
internal sealed class PoolDebugTracker<T>(string poolName, string pool) where T : class
{
    private readonly ConditionalWeakTable<T, State> _states = new();

    /// <summary>Marks <paramref name="item"/> as out.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)] // keep the table code out of inlined rent paths
    public void OnRent(T item)
    {
        var state = _states.GetValue(item, static _ => new State());
        Interlocked.Exchange(ref state.Out, 1); // pairs with the Exchange in OnReturn: one flip per hand-out
    }

    /// <summary>Checks and marks <paramref name="item"/> as back; throws on a double or foreign return.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public void OnReturn(T item)
    {
        if (!_states.TryGetValue(item, out var state))
        {
            ManalocEventSource.Log.ForeignReturn(poolName, item.GetType().Name);
            ThrowHelper.ThrowForeignReturn(pool, PoolText.TypeName(item.GetType()));
        }
        if (Interlocked.Exchange(ref state.Out, 0) == 0) // only one of two racing returns sees 1
        {
            ManalocEventSource.Log.DoubleReturn(poolName, item.GetType().Name);
            ThrowHelper.ThrowDoubleReturn(pool, PoolText.TypeName(item.GetType()));
        }
    }

    private sealed class State
    {
        public int Out;
    }
}
