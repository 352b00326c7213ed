using System.Runtime;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Untimed set-up work with the collector suspended: a fill of a large live set whose objects would otherwise be copied
/// from generation to generation by the collections the fill itself triggers (work that measures nothing). What the
/// work leaves is young; a caller that then times a full collection runs one untimed full collection first, so the
/// timed ones see the same settled heap a fill with collections would leave.
/// </summary>
public static class NoGcRegion
{
    /// <summary>
    /// Runs <paramref name="work"/> in a no-GC region of <paramref name="bytes"/> when the runtime grants one (else with
    /// collections as usual); the region is always ended.
    /// </summary>
    public static T Run<T>(long bytes, Func<T> work)
    {
        ArgumentNullException.ThrowIfNull(work);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bytes);
        bool region;
        try
        {
            region = GC.TryStartNoGCRegion(bytes);
        }
        catch (Exception e) when (e is ArgumentOutOfRangeException or InvalidOperationException)
        {
            region = false; // more than this runtime lets a region hold, or one already open: run with collections
        }
        try
        {
            return work();
        }
        finally
        {
            // A region ends by itself when its budget runs out or a collection is induced (the mode is no longer
            // NoGCRegion then, or EndNoGCRegion says so): either way nothing is left open.
            if (region && GCSettings.LatencyMode == GCLatencyMode.NoGCRegion)
            {
                try { GC.EndNoGCRegion(); }
                catch (InvalidOperationException) { }
            }
        }
    }
}
