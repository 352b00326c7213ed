using Manaloc.AspNetCore.Kestrel;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Manaloc.Threading;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Manaloc.AspNetCore.IdleRelease;

/// <summary>
/// Watches for requests (a middleware put first by an <see cref="IStartupFilter"/>) and, once none has started for
/// <see cref="IdleReleaseOptions.QuietAfter"/> and none is still running, trims the Kestrel memory pools of <see cref="ManalocMemoryPoolFactory"/>
/// (when it is registered) and runs one aggressive collection; then nothing more until a request comes.
/// </summary>
/// <remarks>
/// <para>A request costs one read of a flag (and a write only when the flag is clear, once per check period), so the
/// flag's cache line stays shared between cores under load, and one add to a per-core striped count when it starts
/// and one when it completes (through <c>HttpResponse.OnCompleted</c>, whose list Kestrel keeps per connection: no
/// allocation per request). A long request (a download, a stream) keeps the service busy while it runs, so the
/// collection never pauses it. The check runs on a timer of the container's
/// <see cref="TimeProvider"/> (the system's when there is none) every quarter of the quiet time, and the release
/// runs at the fourth check in a row that saw no request: between <see cref="IdleReleaseOptions.QuietAfter"/> and 1.25 times it after the last one.</para>
/// <para>Memory ordering: requests set <c>_activity</c> to 1; the timer takes it with <see cref="Interlocked.Exchange(ref int, int)"/>
/// (reads and clears at once), so a request that starts before the exchange is seen by this check and one that starts
/// after it sets the flag again for the next check: no request is missed, whichever comes first. A request that began
/// before the previous check and still runs has its start in the in-flight count, which no other request's adds can
/// hide: the flag is set (or was found set) before a start's add (an interlocked add, a full fence), so a sum that read
/// a racing request's completion without its start is followed by a read of the flag that sees it set, and the check
/// counts as busy. Timer callbacks
/// do not overlap (<c>_checking</c>), so the quiet count and the released mark are touched by one thread at a time.</para>
/// <para>Thread safety: <see cref="NoteRequest"/> is safe from any thread.</para>
/// </remarks>
internal sealed class IdleReleaseService(IdleReleaseOptions options, TimeProvider clock, ILogger logger, Diagnostics.AspNetCoreMetrics metrics, ManalocMemoryPoolFactory? pools)
    : IHostedService, IDisposable
{
    /// <summary>Checks per quiet time: the release runs at the fourth quiet check after the last one that saw a request.</summary>
    private const int ChecksPerQuiet = 4;

    private static readonly Func<object, Task> s_requestCompleted = static state =>
    {
        ((IdleReleaseService)state)._inFlight.Decrement();
        return Task.CompletedTask;
    };

    private readonly StripedCounter _inFlight = new();
    private int _activity;
    private int _checking;
    private int _quietChecks;
    private bool _released;
    private long _releases;
    private ITimer? _timer;

    /// <summary>Releases run since the host started.</summary>
    public long Releases => Interlocked.Read(ref _releases);

    /// <summary>Requests started and not yet completed (approximate while requests start and end).</summary>
    public long InFlight => _inFlight.Sum();

    /// <summary>A request started (the middleware's call): counted in flight until its response completes. No allocation, usually no write to the flag.</summary>
    public void NoteRequest(HttpContext context)
    {
        if (Volatile.Read(ref _activity) == 0) Volatile.Write(ref _activity, 1);
        _inFlight.Increment(); // after the flag (see the remarks)
        context.Response.OnCompleted(s_requestCompleted, this);
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        var period = options.QuietAfter / ChecksPerQuiet;
        _timer = clock.CreateTimer(static state => ((IdleReleaseService)state!).Check(), this, period, period);
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        _timer?.Dispose();
        return Task.CompletedTask;
    }

    public void Dispose() => _timer?.Dispose();

    private void Check()
    {
        if (Interlocked.Exchange(ref _checking, 1) != 0) return; // the previous check still runs
        try
        {
            bool busy = Interlocked.Exchange(ref _activity, 0) != 0;
            busy = busy || _inFlight.Sum() > 0 || Volatile.Read(ref _activity) != 0; // the re-read: see the remarks
            if (busy)
            {
                _quietChecks = 0;
                _released = false;
                return;
            }
            // Counted in checks, not read from the clock: a timer tick a millisecond early must not cost a whole period.
            if (_released || ++_quietChecks < ChecksPerQuiet) return;
            _released = true;
            Release();
        }
        finally
        {
            Volatile.Write(ref _checking, 0);
        }
    }

    private void Release()
    {
        // As of the last collection (the GC reports nothing newer), so "before" may be older than this release.
        long before = GC.GetGCMemoryInfo(GCKind.Any).TotalCommittedBytes;
        string trimmed = "no Manaloc pool to trim";
        if (pools is not null)
        {
            long retained = pools.GetStatistics().RetainedBytes;
            foreach (var pool in pools.Pools) pool.Trim(); // idle owners on every quiet thread, then the manager; a disposed pool ignores it
            trimmed = FormattableString.Invariant($"Kestrel's pools trimmed (idle {retained / 1e6:0.0} MB -> {pools.GetStatistics().RetainedBytes / 1e6:0.0} MB)");
        }
        string collected = "no collection (CollectGarbage is off)";
        if (options.CollectGarbage)
        {
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
            collected = FormattableString.Invariant($"GC committed {before / 1e6:0.0} MB at the last collection -> {GC.GetGCMemoryInfo(GCKind.Any).TotalCommittedBytes / 1e6:0.0} MB after this one");
        }
        Interlocked.Increment(ref _releases);
        metrics.IdleReleased();
        logger.LogInformation("Idle release: no request for {Quiet}: {Trimmed}, {Collected}.", options.QuietAfter, trimmed, collected);
    }

    /// <summary>Puts the request watch first in the pipeline.</summary>
    internal sealed class Filter(IdleReleaseService service) : IStartupFilter
    {
        public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
        {
            app.Use(requestDelegate => context =>
            {
                service.NoteRequest(context);
                return requestDelegate(context);
            });
            next(app);
        };
    }
}
