using System.Runtime.InteropServices;

namespace Manaloc.Pooling;

/// <summary>
/// Calls back after every gen-2 collection for as long as its target lives: a finalizable object that
/// re-registers itself for finalization each time it is finalized (the runtime's own ArrayPool trims
/// the same way). The target is held weakly, so the callback never keeps a pool alive.
/// </summary>
/// <remarks>
/// The callback runs on the finalizer thread. When the target has been collected, or the callback
/// answers false, the callback stops; when the target is gone, <c>onTargetGone</c> runs (if given) and the object stops re-registering.
/// </remarks>
internal sealed class Gen2GcCallback
{
    private readonly Func<object, bool> _callback;
    private readonly Action? _onTargetGone;
    private GCHandle _weakTarget;

    private Gen2GcCallback(Func<object, bool> callback, object target, Action? onTargetGone)
    {
        _callback = callback;
        _onTargetGone = onTargetGone;
        _weakTarget = GCHandle.Alloc(target, GCHandleType.Weak);
    }

    /// <summary>Registers <paramref name="callback"/>(target) to run after each gen-2 GC while target lives.</summary>
    public static void Register(Func<object, bool> callback, object target, Action? onTargetGone = null)
        => _ = new Gen2GcCallback(callback, target, onTargetGone);

    ~Gen2GcCallback()
    {
        object? target = _weakTarget.Target;
        if (target is null)
        {
            _weakTarget.Free();
            try
            {
                _onTargetGone?.Invoke();
            }
            catch (Exception) // never let the clean-up take the finalizer thread (and the process) down
            {
            }
            return;
        }
        bool again;
        try
        {
            again = _callback(target);
        }
        catch (Exception) // never let a trim take the finalizer thread (and the process) down
        {
            again = true;
        }
        if (!again)
        {
            _weakTarget.Free();
            return;
        }
        if (!Environment.HasShutdownStarted)
        {
            GC.ReRegisterForFinalize(this);
        }
    }
}
