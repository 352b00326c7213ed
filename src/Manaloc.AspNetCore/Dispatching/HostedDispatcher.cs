using Manaloc.AspNetCore.Diagnostics;
using Manaloc.Threading;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Manaloc.AspNetCore.Dispatching;

/// <summary>
/// A named <see cref="DedicatedThreadDispatcher"/> owned by the host: created when the host starts, drained
/// when it stops, with a share per client for request work. Registered by
/// <see cref="ManalocServiceCollectionExtensions.AddDedicatedDispatcher"/>; resolve it as a keyed service
/// (<c>[FromKeyedServices("cpu")] HostedDispatcher cpu</c>).
/// </summary>
/// <remarks>
/// <para>Why: CPU-bound work run on the thread pool competes with the I/O completions that every request
/// needs, so a burst of it raises everyone's latency. On dedicated threads, behind a bounded queue with a
/// share per client, it waits its turn, and a client sending more than its share is refused at once
/// instead of filling the queue.</para>
/// <para>Shutdown: the dispatcher is shut down after the server has stopped (the host's "stopped" phase,
/// when requests in flight have had the server's own grace period), and it drains for
/// <see cref="DedicatedDispatcherOptions.DrainTimeout"/>, at most the host's shutdown timeout. Work that
/// did not run by then is not dropped silently: a request waiting for it is answered
/// <see cref="DedicatedDispatcherOptions.FullQueueStatusCode"/>, and the count is logged as a warning.</para>
/// <para>Thread safety: every member is safe from any thread.</para>
/// </remarks>
public sealed class HostedDispatcher
{
    private readonly DedicatedDispatcherOptions _options;
    private readonly ILogger _logger;
    private readonly AspNetCoreMetrics _metrics;
    private readonly ClientShares _shares;
    private readonly IResult _overShare;
    private readonly IResult _unavailable;
    private DedicatedThreadDispatcher? _dispatcher;
    // Statistics only: Interlocked so no increment is lost; they order nothing.
    private long _completed, _overShareCount, _unavailableCount, _abandoned;
    // 0 until the drain's leftovers are taken, then 1 (Interlocked.Exchange: exactly one caller answers them).
    private int _leftoversTaken;

    internal HostedDispatcher(string name, DedicatedDispatcherOptions options, ILogger logger, AspNetCoreMetrics metrics)
    {
        Name = name;
        _options = options;
        _logger = logger;
        _metrics = metrics;
        _shares = new ClientShares(options.ClientShare, options.ClientLine);
        _overShare = Results.StatusCode(options.OverShareStatusCode);
        _unavailable = Results.StatusCode(options.FullQueueStatusCode);
    }

    /// <summary>The name given at registration (also the dispatcher's name and its threads').</summary>
    public string Name { get; }

    /// <summary>The dispatcher, for work that is not a request's (post to it directly).</summary>
    /// <exception cref="InvalidOperationException">The host has not started yet.</exception>
    public DedicatedThreadDispatcher Dispatcher => Volatile.Read(ref _dispatcher)
        ?? throw new InvalidOperationException($"The dedicated dispatcher '{Name}' starts with the host; the host has not started yet.");

    /// <summary>The counters since the host started.</summary>
    public HostedDispatcherStatistics GetStatistics() => new()
    {
        Completed = Interlocked.Read(ref _completed), OverShare = Interlocked.Read(ref _overShareCount), Unavailable = Interlocked.Read(ref _unavailableCount),
        Abandoned = Interlocked.Read(ref _abandoned), ActiveClients = _shares.ActiveClients, Waiting = _shares.Waiting,
    };

    /// <summary>
    /// Runs <paramref name="work"/> on one of the dispatcher's threads within the client's share, and gives
    /// the response: <paramref name="work"/>'s result when it is an <see cref="IResult"/>, else 200 with it as JSON.
    /// </summary>
    /// <param name="context">The request (its client is found by <see cref="DedicatedDispatcherOptions.ClientKey"/>).</param>
    /// <param name="work">The CPU-bound work; an exception it throws is rethrown here (so the server answers 500 as for any handler).</param>
    /// <returns>The response; <see cref="DedicatedDispatcherOptions.OverShareStatusCode"/> (with <c>Retry-After: 1</c>) when the client has its
    /// share queued or running and <see cref="DedicatedDispatcherOptions.ClientLine"/> requests waiting; <see cref="DedicatedDispatcherOptions.FullQueueStatusCode"/> when the queue is full, the host is not started or
    /// is stopping, or the work was abandoned at the drain deadline.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="context"/> or <paramref name="work"/> is null.</exception>
    /// <remarks>The share counts the item from the moment it is queued until it has run; writing the response is not counted.
    /// A request over its client's share waits in that client's line (holding no thread) until one of the client's items
    /// has run; so a flooding client's extra requests wait for its own work, not everyone's. A request whose client
    /// disconnects while in line leaves it.</remarks>
    public Task<IResult> RunAsync<TResult>(HttpContext context, Func<TResult> work)
    {
        ArgumentNullException.ThrowIfNull(work);
        // One request path: the closure is the pooled form's state. AsTask reads the pooled item's result once, then
        // the item is back in its pool and the task holds the result.
        return RunAsync(context, work, static work => work()).AsTask();
    }

    /// <summary>
    /// Runs <paramref name="work"/> with <paramref name="state"/> on one of the dispatcher's threads within the
    /// client's share, as <see cref="RunAsync{TResult}(HttpContext, Func{TResult})"/> does, without allocating per request
    /// on the way: no closure (the state is passed), and the work item with its completion is pooled.
    /// </summary>
    /// <param name="context">The request (its client is found by <see cref="DedicatedDispatcherOptions.ClientKey"/>).</param>
    /// <param name="state">What <paramref name="work"/> needs (a value type or an object the request already has: no closure).</param>
    /// <param name="work">The CPU-bound work, best a static lambda; an exception it throws is rethrown here.</param>
    /// <returns>The response, as for <see cref="RunAsync{TResult}(HttpContext, Func{TResult})"/>. Await it once: the pooled item
    /// behind it serves another request after that (a second await, or <c>AsTask</c> after the first, is undefined).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="context"/> or <paramref name="work"/> is null.</exception>
    /// <remarks>Why: the dispatcher hop should not cost the request more than the thread pool did: the closure, the work
    /// item, its delegate and a task per request are gone. What still allocates: the
    /// <see cref="IResult"/> (<c>Results.Ok(value)</c>) unless <paramref name="work"/> returns a cached one, and, for a
    /// request that waits in its client's line, the wait's state.</remarks>
    public ValueTask<IResult> RunAsync<TState, TResult>(HttpContext context, TState state, Func<TState, TResult> work)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(work);
        var dispatcher = Volatile.Read(ref _dispatcher);
        if (dispatcher is null || !dispatcher.IsAcceptingWork) return new ValueTask<IResult>(Refuse(ref _unavailableCount, "stopped"));
        string client = _options.ClientKey?.Invoke(context) ?? DefaultClientKey(context);
        var share = _shares.TryAcquire(client, context.RequestAborted);
        return share.IsCompletedSuccessfully ? Post(dispatcher, share.Result, context, state, work) : WaitThenPostAsync(dispatcher, share, context, state, work);
    }

    /// <summary>The client was over its share: waits in its line (no thread held), then posts.</summary>
    private async ValueTask<IResult> WaitThenPostAsync<TState, TResult>(DedicatedThreadDispatcher dispatcher, ValueTask<ClientShares.Entry?> pending, HttpContext context,
        TState state, Func<TState, TResult> work)
    {
        ClientShares.Entry? share;
        try
        {
            share = await pending.ConfigureAwait(false);
        }
        catch (OperationCanceledException) // the client went away while in line: nobody reads the answer
        {
            return _unavailable;
        }
        return await Post(dispatcher, share, context, state, work).ConfigureAwait(false);
    }

    private ValueTask<IResult> Post<TState, TResult>(DedicatedThreadDispatcher dispatcher, ClientShares.Entry? share, HttpContext context, TState state, Func<TState, TResult> work)
    {
        if (share is null)
        {
            context.Response.Headers.RetryAfter = "1";
            return new ValueTask<IResult>(Refuse(ref _overShareCount, "over_share"));
        }
        var item = PooledWorkItem<TState, TResult>.Rent(this, share, state, work);
        // Read before posting: once posted, the item is the worker's (or the drain's), not this thread's.
        var answer = item.Task;
        if (!dispatcher.TryPost(item.RunAction))
        {
            _shares.Release(share);
            item.Recycle();
            return new ValueTask<IResult>(Refuse(ref _unavailableCount, dispatcher.IsAcceptingWork ? "full" : "stopped"));
        }
        return answer;
    }

    private static string DefaultClientKey(HttpContext context)
        => context.Connection.RemoteIpAddress?.ToString() ?? context.Connection.Id;

    private IResult Refuse(ref long counter, string reason)
    {
        Interlocked.Increment(ref counter);
        _metrics.DispatcherRefused(Name, reason);
        return reason == "over_share" ? _overShare : _unavailable;
    }

    /// <summary>Creates the dispatcher (the host is starting).</summary>
    internal void Start()
    {
        var dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions
        {
            Name = Name,
            ThreadCount = _options.ThreadCount,
            Capacity = _options.Capacity,
            FullMode = FullQueueMode.Block, // requests use TryPost (never blocks); code posting directly waits for room
        });
        // Publishes the fully constructed dispatcher to request threads (they read it with Volatile.Read).
        if (Interlocked.CompareExchange(ref _dispatcher, dispatcher, null) is not null)
        {
            dispatcher.Dispose();
            return;
        }
        _logger.LogInformation("Dedicated dispatcher '{Name}' started: {Threads} threads, capacity {Capacity}, client share {Share}.",
            Name, _options.ThreadCount, _options.Capacity, _options.ClientShare);
    }

    /// <summary>Shuts the dispatcher down, draining for the drain timeout (at most <paramref name="hostTimeout"/>); logs and answers what did not run.</summary>
    internal async Task StopAsync(TimeSpan hostTimeout, CancellationToken cancellationToken)
    {
        var dispatcher = Volatile.Read(ref _dispatcher);
        if (dispatcher is null) return;
        var drain = _options.DrainTimeout < hostTimeout ? _options.DrainTimeout : hostTimeout;
        var shutdown = dispatcher.ShutdownAsync(drain);
        try
        {
            await shutdown.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // The host gave up first: report what did not run when the drain deadline passes, still.
            _logger.LogWarning("Dedicated dispatcher '{Name}': the host stopped waiting before the drain deadline ({Drain}); what did not run is logged when it passes.", Name, drain);
            _ = shutdown.ContinueWith(static (t, state) => ((HostedDispatcher)state!).ReportLeftovers(t.Result), this,
                CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            return;
        }
        ReportLeftovers(await shutdown.ConfigureAwait(false));
    }

    /// <summary>Ends the dispatcher without draining if <see cref="StopAsync"/> never ran (a host whose start failed); what did not run is still reported.</summary>
    internal void Abort()
    {
        var dispatcher = Volatile.Read(ref _dispatcher);
        if (dispatcher is null || !dispatcher.IsAcceptingWork) return;
        ReportLeftovers(dispatcher.Shutdown(TimeSpan.Zero));
    }

    /// <summary>
    /// Answers and logs what the drain handed back. The dispatcher's shutdown task is cached, so a second stop (the host's
    /// <c>StopAsync</c> then its disposal, or <see cref="Abort"/>) sees the same list: only the first caller may touch its
    /// items, which by then may be back in their pool serving other requests.
    /// </summary>
    private void ReportLeftovers(IReadOnlyList<Action> left)
    {
        if (Interlocked.Exchange(ref _leftoversTaken, 1) != 0) return;
        if (left.Count == 0)
        {
            _logger.LogInformation("Dedicated dispatcher '{Name}' drained: every accepted work item ran.", Name);
            return;
        }
        int requests = 0;
        foreach (var action in left)
        {
            if (action.Target is IAbandonable abandonable)
            {
                abandonable.Abandon();
                requests++;
            }
        }
        Interlocked.Add(ref _abandoned, left.Count);
        _metrics.DispatcherAbandoned(Name, left.Count);
        _logger.LogWarning("Dedicated dispatcher '{Name}': {Count} accepted work items did not run before the drain deadline ({Drain}): {Requests} requests were answered {Status}, {Other} other items were not run.",
            Name, left.Count, _options.DrainTimeout, requests, _options.FullQueueStatusCode, left.Count - requests);
    }

    private interface IAbandonable
    {
        void Abandon();
    }

    /// <summary>
    /// One request's work with its state, pooled: runs on a worker, releases the client's share, completes the
    /// request's value task; back in the pool once the request has read the result.
    /// </summary>
    /// <remarks>
    /// <para>Ownership: one owner at a time, handed on, never shared.</para>
    /// <list type="number">
    /// <item>The request thread, from <see cref="Rent"/>: it fills the item and takes its <see cref="Task"/> (the version)
    /// before posting. If the post is refused it still owns the item and <see cref="Recycle"/>s it.</item>
    /// <item>The dispatcher's queue, once posted: the request thread touches it no more.</item>
    /// <item>Whoever claims the queue position (the head CAS gives each position to exactly one claimer): a worker, which
    /// calls <see cref="Run"/>, or the shutdown's drain, whose list <see cref="ReportLeftovers"/> takes once and calls
    /// <see cref="Abandon"/>. Exactly one of the two runs, once; each clears the item and releases the share before it
    /// sets the result, and touches the item no more after that.</item>
    /// <item>The request's awaiter, once the result is set: its one <see cref="GetResult"/> reads the result, resets the
    /// item and returns it to the pool, last.</item>
    /// </list>
    /// <para>Memory ordering: the request thread's writes are ordered before the claimer's reads by the queue's publish
    /// (release) and claim (acquire). <see cref="System.Threading.Tasks.Sources.ManualResetValueTaskSourceCore{TResult}"/>
    /// orders the claimer's writes before the awaiter's <see cref="GetResult"/>; the pool's own hand-off orders the reset
    /// before the next renter's writes. A second <see cref="Run"/> or <see cref="Abandon"/> of one posting would touch
    /// an item another request may own by then: the null owner it would find is that broken invariant showing.</para>
    /// </remarks>
    private sealed class PooledWorkItem<TState, TResult> : IAbandonable, System.Threading.Tasks.Sources.IValueTaskSource<IResult>
    {
        // Shared by every dispatcher of the process (a pool per closed generic type); items hold nothing between uses.
        private static readonly Pooling.SemiLocalPool<PooledWorkItem<TState, TResult>> s_pool =
            new(Pooling.PoolPolicies.Create(static () => new PooledWorkItem<TState, TResult>()), new Pooling.PoolOptions { Name = "hosted-dispatcher.work-items" });

        // Continuations run on the thread pool, never inline on the dispatcher's worker.
        private System.Threading.Tasks.Sources.ManualResetValueTaskSourceCore<IResult> _completion = new() { RunContinuationsAsynchronously = true };
        private HostedDispatcher? _owner;
        private ClientShares.Entry? _share;
        private TState _state = default!;
        private Func<TState, TResult>? _work;

        private PooledWorkItem() => RunAction = Run;

        /// <summary>The item's delegate, made once: posting it allocates nothing.</summary>
        public Action RunAction { get; }

        public ValueTask<IResult> Task => new(this, _completion.Version);

        public static PooledWorkItem<TState, TResult> Rent(HostedDispatcher owner, ClientShares.Entry share, TState state, Func<TState, TResult> work)
        {
            var item = s_pool.Rent();
            item._owner = owner;
            item._share = share;
            item._state = state;
            item._work = work;
            return item;
        }

        /// <summary>Back to the pool without having run (the dispatcher refused it).</summary>
        public void Recycle()
        {
            Clear();
            _completion.Reset();
            s_pool.Return(this);
        }

        private void Run()
        {
            var owner = _owner!;
            var share = _share!;
            var state = _state;
            var work = _work!;
            Clear();
            IResult result;
            try
            {
                TResult value = work(state);
                result = value as IResult ?? Results.Ok(value);
            }
            catch (Exception e) // the request's failure, rethrown to its handler; the worker goes on
            {
                owner._shares.Release(share);
                Interlocked.Increment(ref owner._completed);
                _completion.SetException(e);
                return;
            }
            owner._shares.Release(share);
            Interlocked.Increment(ref owner._completed);
            _completion.SetResult(result);
        }

        public void Abandon()
        {
            var owner = _owner!;
            owner._shares.Release(_share!);
            Clear();
            _completion.SetResult(owner._unavailable);
        }

        private void Clear()
        {
            _owner = null;
            _share = null;
            _state = default!;
            _work = null;
        }

        public IResult GetResult(short token)
        {
            try
            {
                return _completion.GetResult(token);
            }
            finally
            {
                _completion.Reset();
                s_pool.Return(this);
            }
        }

        public System.Threading.Tasks.Sources.ValueTaskSourceStatus GetStatus(short token) => _completion.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token, System.Threading.Tasks.Sources.ValueTaskSourceOnCompletedFlags flags)
            => _completion.OnCompleted(continuation, state, token, flags);
    }
}
