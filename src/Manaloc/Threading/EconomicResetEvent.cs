using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;
using Manaloc.Diagnostics;

namespace Manaloc.Threading;

// Memory-ordering argument (why no wakeup is ever lost and a Set after an enqueue is never
// reordered before it)
// ------------------------------------------------------------------------------------------
// All coordination goes through one int, _state: Unset, Signaled, Waiting (one thread has
// committed to block on _park) or Disposed. Every transition is an Interlocked operation on
// that word, so (1) all transitions are totally ordered (single-location coherence) and (2)
// each one is a full fence (the CLR guarantees it for every Interlocked method, on x64 and Arm64
// alike).
//
// Producer: "enqueue; Set()". Set always starts with an Interlocked.CompareExchange, never with
// a plain read: a plain read of "already Signaled" could be satisfied before the enqueue's store
// leaves the store buffer (store->load reordering, allowed even on x64), the consumer could
// consume that older signal, find the queue empty and block, and the item would sit unseen.
// The CAS is a full fence, so the enqueue is visible to every thread before Set reads _state.
//
// Consumer: "dequeue finds nothing; Wait()". Wait may read _state first, but only as a hint:
// it returns only after a CAS Signaled→Unset and blocks only after a CAS Unset→Waiting. The
// producer's CAS and the consumer's deciding CAS are ordered on _state:
//   * Set's CAS first: the consumer sees Signaled (or Unset→Waiting fails and it retries and
//     sees Signaled), consumes it and returns; its next dequeue follows a full fence that
//     follows the producer's, so it sees the item.
//   * Wait's claim (Unset→Waiting) first: Set's CAS sees Waiting and hands the signal over
//     (Waiting→Unset, then _park.Set()). The waiter cannot withdraw (timeout, cancellation)
//     without winning Waiting→Unset itself, so exactly one of "waker" and "withdrawer" wins;
//     a waiter that loses waits (uninterruptibly, briefly) for the waker's _park.Set() and
//     returns true, so neither the signal nor the park's state is left behind.
// The park (a kernel-backed AutoResetEvent, created at the first blocking wait) is set only by
// the one thread that took the waiter's Waiting state, and each such set is consumed by the
// waiter (its wait returns, or it waits once more after losing the withdraw race): it is clean at
// the start of every blocking episode.

/// <summary>
/// An auto-reset event for producer/consumer hand-offs that keeps its own state word, so a
/// <see cref="Set"/> with nobody waiting and a <see cref="Wait()"/> when already set each cost one
/// interlocked operation and never enter the kernel. Many threads may set it; one thread at a time
/// may wait on it.
/// </summary>
/// <remarks>
/// <para>Why: <see cref="AutoResetEvent"/> enters the kernel on every Set and every WaitOne even
/// when the outcome is known (already set, nobody waiting). In a consumer loop that is fed faster
/// than it drains, almost every call is redundant. This event tracks set/unset/waiting itself and
/// blocks (on a lazily created kernel-backed <see cref="AutoResetEvent"/>) only when a waiter
/// really has to sleep, after a short, configurable spin.</para>
/// <para>Semantics: like <see cref="AutoResetEvent"/>: a Set with a blocked waiter releases it and
/// leaves the event unset; a Set with nobody waiting leaves it set until one Wait consumes it;
/// Sets do not accumulate. Typical use: producers enqueue then <see cref="Set"/>; the consumer
/// drains its queue and calls <see cref="Wait()"/> when it finds it empty. No wakeup is lost and
/// no Set is reordered before the writes that preceded it (the argument is in the source).</para>
/// <para>Thread safety: <see cref="Set"/>, <see cref="Reset"/>, <see cref="IsSet"/> and
/// <see cref="Dispose"/> may be called from any thread at any time. At most one thread may be in a
/// Wait at a time: a second concurrent waiter gets <see cref="InvalidOperationException"/> rather
/// than a hang. <see cref="Dispose"/> wakes a blocked waiter with
/// <see cref="ObjectDisposedException"/>; every later call throws it too.</para>
/// <para>If cancellation or a timeout races with a Set that already handed the signal to the
/// waiter, the Wait returns <see langword="true"/> (the signal is delivered, not lost). A token
/// that is already cancelled when Wait is called throws <see cref="OperationCanceledException"/>
/// even if the event is set, and the signal stays pending for the next Wait: the rule of
/// <see cref="SemaphoreSlim.Wait(CancellationToken)"/> and <see cref="ManualResetEventSlim.Wait(CancellationToken)"/>.</para>
/// <para>Timeouts are never shorter than asked: a timeout runs from the call on the event's clock,
/// with no rounding to milliseconds (0.9 ms waits at least 0.9 ms), and a kernel wait that ends
/// early is resumed for the rest. So <c>Wait(deadline.Remaining)</c> returns false only once the
/// <see cref="Deadline"/> has expired, when both use the same clock.</para>
/// </remarks>
public sealed class EconomicResetEvent : IDisposable
{
    /// <summary>
    /// The spin count used when none is given, the same as <see cref="ManualResetEventSlim"/>'s on a
    /// multi-core machine: ten growing busy-spins (a few microseconds), then spins alternating with
    /// yields of the time slice, about 10-20 µs in all before blocking.
    /// </summary>
    /// <remarks>A shorter spin blocks a waiter whose partner answers just after the spin ends, which
    /// costs a kernel wake per hand-off (docs/threading-events.md says how the default was chosen). Pass 0
    /// where idle CPU matters more than hand-off latency.</remarks>
    public const int DefaultSpinCount = 35;

    /// <summary>The largest accepted spin count.</summary>
    public const int MaxSpinCount = 2047;

    private const int Unset = 0;
    private const int Signaled = 1;
    private const int Waiting = 2;
    private const int Disposed = 3;

    private int _state;
    private AutoResetEvent? _park;
    private bool _wokenByDispose;
    private int _waiterActive;
    private readonly int _spinCount;
    private readonly TimeProvider _timeProvider;

    /// <summary>Creates an event.</summary>
    /// <param name="initialState">True to start set (the first Wait returns at once).</param>
    /// <param name="spinCount">How many times a waiter re-checks the state (busy-spinning, then
    /// yielding) before it blocks; 0 blocks at once and never burns idle CPU.</param>
    /// <param name="timeProvider">The clock timeouts run on; <see cref="TimeProvider.System"/> when null.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="spinCount"/> is negative or above <see cref="MaxSpinCount"/>.</exception>
    public EconomicResetEvent(bool initialState = false, int spinCount = DefaultSpinCount, TimeProvider? timeProvider = null)
    {
        if ((uint)spinCount > MaxSpinCount) ThrowHelper.ThrowSpinCount(spinCount);
        _state = initialState ? Signaled : Unset;
        _spinCount = spinCount;
        _timeProvider = timeProvider ?? TimeProvider.System;
    }

    /// <summary>True while the event is set (a Wait would return at once).</summary>
    /// <remarks>A snapshot: another thread may change it right after the read.</remarks>
    public bool IsSet => Volatile.Read(ref _state) == Signaled; // acquire: a snapshot only, nothing is ordered on it

    /// <summary>How many times a waiter re-checks the state before blocking.</summary>
    public int SpinCount => _spinCount;

    /// <summary>True while a waiter has committed to block (for tests and diagnostics).</summary>
    internal bool HasBlockedWaiter => Volatile.Read(ref _state) == Waiting; // snapshot for tests

    /// <summary>Sets the event: releases the waiter if one is blocked, otherwise leaves the event set.</summary>
    /// <remarks>One compare-and-swap when nobody is blocked; it is a full fence, so everything the
    /// caller wrote before <see cref="Set"/> is visible to the waiter it releases.</remarks>
    /// <exception cref="ObjectDisposedException">The event was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Set()
    {
        // Full fence first, never a plain read: the caller's enqueue is published before _state is read (see the header).
        // A compare-exchange that fails writes nothing, and on Arm64 it is then not guaranteed to order an earlier
        // plain store before its load; the explicit barrier makes the argument hold there (folded away on x86/x64).
        if (!X86Base.IsSupported) Interlocked.MemoryBarrier();
        int previous = Interlocked.CompareExchange(ref _state, Signaled, Unset);
        if (previous > Signaled)
        {
            SetSlow(previous);
        }
    }

    /// <summary>Unsets the event if it is set (a pending signal is discarded).</summary>
    /// <exception cref="ObjectDisposedException">The event was disposed.</exception>
    public void Reset()
    {
        // Signaled→Unset only: a Waiting state belongs to the waiter and is left alone.
        if (Interlocked.CompareExchange(ref _state, Unset, Signaled) == Disposed) ThrowHelper.ThrowObjectDisposed(this);
    }

    /// <summary>Waits until the event is set, then unsets it.</summary>
    /// <exception cref="InvalidOperationException">Another thread is already waiting.</exception>
    /// <exception cref="ObjectDisposedException">The event was disposed, before or during the wait.</exception>
    public void Wait() => Wait(Timeout.Infinite, CancellationToken.None);

    /// <summary>Waits until the event is set or the timeout passes.</summary>
    /// <param name="millisecondsTimeout">Milliseconds, 0 to only test, <see cref="Timeout.Infinite"/> to wait without limit.</param>
    /// <returns>True if the event was set (and is now consumed); false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is below -1.</exception>
    /// <exception cref="InvalidOperationException">Another thread is already waiting.</exception>
    /// <exception cref="ObjectDisposedException">The event was disposed, before or during the wait.</exception>
    public bool Wait(int millisecondsTimeout) => Wait(millisecondsTimeout, CancellationToken.None);

    /// <summary>Waits until the event is set or the timeout passes.</summary>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> to wait without limit.</param>
    /// <returns>True if the event was set (and is now consumed); false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is negative (other than infinite) or too large.</exception>
    /// <exception cref="InvalidOperationException">Another thread is already waiting.</exception>
    /// <exception cref="ObjectDisposedException">The event was disposed, before or during the wait.</exception>
    public bool Wait(TimeSpan timeout) => WaitCore(ToTimeoutTicks(timeout), CancellationToken.None);

    /// <summary>Waits until the event is set or the token is cancelled.</summary>
    /// <param name="cancellationToken">Stops the wait.</param>
    /// <exception cref="OperationCanceledException">The token was cancelled before the event was set.</exception>
    /// <exception cref="InvalidOperationException">Another thread is already waiting.</exception>
    /// <exception cref="ObjectDisposedException">The event was disposed, before or during the wait.</exception>
    public void Wait(CancellationToken cancellationToken) => Wait(Timeout.Infinite, cancellationToken);

    /// <summary>Waits until the event is set, the timeout passes or the token is cancelled.</summary>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> to wait without limit.</param>
    /// <param name="cancellationToken">Stops the wait.</param>
    /// <returns>True if the event was set (and is now consumed); false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is negative (other than infinite) or too large.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled before the event was set.</exception>
    /// <exception cref="InvalidOperationException">Another thread is already waiting.</exception>
    /// <exception cref="ObjectDisposedException">The event was disposed, before or during the wait.</exception>
    public bool Wait(TimeSpan timeout, CancellationToken cancellationToken) => WaitCore(ToTimeoutTicks(timeout), cancellationToken);

    /// <summary>Waits until the event is set, the timeout passes or the token is cancelled.</summary>
    /// <param name="millisecondsTimeout">Milliseconds, 0 to only test, <see cref="Timeout.Infinite"/> to wait without limit.</param>
    /// <param name="cancellationToken">Stops the wait.</param>
    /// <returns>True if the event was set (and is now consumed); false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is below -1.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled before the event was set.</exception>
    /// <exception cref="InvalidOperationException">Another thread is already waiting.</exception>
    /// <exception cref="ObjectDisposedException">The event was disposed, before or during the wait.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Wait(int millisecondsTimeout, CancellationToken cancellationToken)
    {
        if (millisecondsTimeout < Timeout.Infinite) ThrowHelper.ThrowTimeout(TimeSpan.FromMilliseconds(millisecondsTimeout));
        return WaitCore(millisecondsTimeout == Timeout.Infinite ? InfiniteTicks : millisecondsTimeout * TimeSpan.TicksPerMillisecond, cancellationToken);
    }

    /// <summary>A timeout of <see cref="InfiniteTicks"/> never ends; any other is at least that many <see cref="TimeSpan"/> ticks.</summary>
    private const long InfiniteTicks = -1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool WaitCore(long timeoutTicks, CancellationToken cancellationToken)
    {
        // A cancelled token wins over a pending signal, which stays pending: the rule of SemaphoreSlim.Wait and
        // ManualResetEventSlim.Wait, so a caller that cancels never consumes (and so never loses) a signal.
        cancellationToken.ThrowIfCancellationRequested();
        // Consume a pending signal: Signaled→Unset. Full fence: the caller's later reads see what the setter wrote before Set.
        // Read first (a hint only; the CAS decides): a failed CAS would still take the cache line
        // for writing and make the setter on another core fetch it back.
        if (Volatile.Read(ref _state) == Signaled && Interlocked.CompareExchange(ref _state, Unset, Signaled) == Signaled)
        {
            return true;
        }
        return WaitSlow(timeoutTicks, cancellationToken);
    }

    /// <summary>The state, for logs and the debugger: <c>EconomicResetEvent (set)</c>, <c>(unset)</c>, <c>(a thread waiting)</c> or <c>(disposed)</c>.</summary>
    /// <remarks>A snapshot: another thread may change the state the moment after it is read.</remarks>
    public override string ToString() => Volatile.Read(ref _state) switch // acquire: a snapshot only, nothing is ordered on it
    {
        Signaled => "EconomicResetEvent (set)",
        Waiting => "EconomicResetEvent (a thread waiting)",
        Disposed => "EconomicResetEvent (disposed)",
        _ => "EconomicResetEvent (unset)",
    };

    /// <summary>Disposes the event; a blocked waiter wakes with <see cref="ObjectDisposedException"/>.</summary>
    /// <remarks>Idempotent and safe to call from any thread, also while another thread waits. The
    /// internal kernel event (if a wait ever blocked) is not closed here, because a setter or the
    /// waiter may still be between two steps on it; its safe handle releases it when the event is
    /// collected.</remarks>
    public void Dispose()
    {
        // Full fence; Disposed is terminal. Whoever takes a Waiting state owns the wake-up.
        int previous = Interlocked.Exchange(ref _state, Disposed);
        if (previous == Waiting)
        {
            Debug.Assert(_park is not null, "A waiter publishes the park before it claims Waiting.");
            Volatile.Write(ref _wokenByDispose, true); // release: read by the waiter after the park's Set/Wait pair
            _park!.Set();
        }
    }

    private void SetSlow(int state)
    {
        while (true)
        {
            switch (state)
            {
                case Unset:
                    // The waiter withdrew between our two steps: set the event for the next Wait.
                    state = Interlocked.CompareExchange(ref _state, Signaled, Unset); // full fence, as in Set
                    if (state == Unset) return;
                    break;
                case Signaled:
                    return; // a signal is already pending: Sets do not accumulate
                case Waiting:
                    // Hand the signal to the waiter: Waiting→Unset. Winning this CAS makes us its only waker.
                    state = Interlocked.CompareExchange(ref _state, Unset, Waiting);
                    if (state == Waiting)
                    {
                        Debug.Assert(_park is not null, "A waiter publishes the park before it claims Waiting.");
                        _park!.Set();
                        return;
                    }
                    break;
                default:
                    ThrowHelper.ThrowObjectDisposed(this);
                    return;
            }
        }
    }

    /// <summary>The timeout in ticks, exact (no rounding to milliseconds); <see cref="InfiniteTicks"/> for infinite.</summary>
    private static long ToTimeoutTicks(TimeSpan timeout)
    {
        if (timeout == Timeout.InfiniteTimeSpan) return InfiniteTicks;
        if (timeout < TimeSpan.Zero || timeout.Ticks > int.MaxValue * TimeSpan.TicksPerMillisecond) ThrowHelper.ThrowTimeout(timeout);
        return timeout.Ticks;
    }

    // The waiter's slow path: spin, claim the Waiting state, block, withdraw on timeout or cancellation.

    private static long s_blockedWaits;

    /// <summary>How many waits, over all events in the process, had to block (for metrics and tests).</summary>
    internal static long BlockedWaits => Interlocked.Read(ref s_blockedWaits); // statistics: orders nothing

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool WaitSlow(long timeoutTicks, CancellationToken cancellationToken)
    {
        int state = Volatile.Read(ref _state); // a hint only: every decision below is taken by a CAS
        if (state == Disposed) ThrowHelper.ThrowObjectDisposed(this);
        if (state == Waiting || Volatile.Read(ref _waiterActive) != 0) ThrowHelper.ThrowConcurrentWaiter(); // a hint: the CAS below decides
        if (timeoutTicks == 0) return false;
        // The timeout runs from here (the call), not from the moment the waiter blocks: the spin counts.
        long due = timeoutTicks == InfiniteTicks ? NoDue : DueTimestamp(timeoutTicks);

        // Spin: a Set that lands within a few microseconds is caught without blocking. Not adaptive
        // on purpose: a waiter that stops spinning makes every Set pay the kernel wake, which slows
        // the producer, which empties the queue more often. SpinWait's policy, as
        // ManualResetEventSlim's: ten growing pauses, then yields. The state word is not padded: each
        // thread writes the line it just read, so padding only adds a transfer. The variants tried
        // and dropped, with their figures, are in docs/threading-events.md.
        var spinner = new SpinWait();
        for (int i = 0; i < _spinCount; i++)
        {
            state = Volatile.Read(ref _state); // test before the test-and-set: no cache-line write while unset
            if (state == Signaled)
            {
                // Full fence, as in Wait's fast path.
                if (Interlocked.CompareExchange(ref _state, Unset, Signaled) == Signaled) return true;
                continue;
            }
            if (state != Unset) break; // Waiting (another waiter) or Disposed: the claim below reports it
            cancellationToken.ThrowIfCancellationRequested();
            spinner.SpinOnce(sleep1Threshold: -1);
        }

        var park = Volatile.Read(ref _park) ?? CreatePark(); // acquire: pairs with the CAS that published it
        // One blocking waiter at a time, from its claim until it has consumed its wake-up: the
        // Waiting state alone would miss a second waiter arriving while the first still consumes,
        // and the two could then steal each other's park signal. Full fence; orders nothing else.
        if (Interlocked.CompareExchange(ref _waiterActive, 1, 0) != 0) ThrowHelper.ThrowConcurrentWaiter();
        try
        {
            return ClaimAndBlock(park, due, cancellationToken);
        }
        finally
        {
            Volatile.Write(ref _waiterActive, 0); // release: the next blocking waiter starts after everything this one did
        }
    }

    private bool ClaimAndBlock(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        int state;
        while (true)
        {
            // Claim the right to block: Unset→Waiting. Full fence; from here a setter hands its signal to us.
            state = Interlocked.CompareExchange(ref _state, Waiting, Unset);
            if (state == Unset) break;
            if (state == Signaled)
            {
                if (Interlocked.CompareExchange(ref _state, Unset, Signaled) == Signaled) return true; // full fence
                continue;
            }
            Debug.Assert(state == Disposed, "Only the flag holder claims Waiting.");
            ThrowHelper.ThrowObjectDisposed(this);
        }
        Interlocked.Increment(ref s_blockedWaits); // statistics only
        return Block(park, due, cancellationToken);
    }

    private AutoResetEvent CreatePark()
    {
        // A kernel-backed auto-reset event, made only when a waiter first has to block. A loser of
        // the creation race disposes its own, never-published event.
        var created = new AutoResetEvent(false);
        // Full fence: publishes the park before this thread claims Waiting, so a setter that sees Waiting sees the park.
        var winner = Interlocked.CompareExchange(ref _park, created, null);
        if (winner is null) return created;
        created.Dispose();
        return winner;
    }

    private bool Block(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        bool woken;
        try
        {
            woken = ParkWait(park, due, cancellationToken);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            if (TryWithdraw()) throw new OperationCanceledException(cancellationToken);
            return Consume(park, woken: false); // a waker won the race: the signal is ours, not lost
        }
        catch (Exception) when (!TryWithdraw())
        {
            // Any other exception out of the wait (ThreadInterruptedException, a disposed token's
            // handle, out of memory): the filter withdrew our Waiting state if it could, and then the
            // exception simply propagates with the event Unset. Here a setter or Dispose took Waiting
            // first: absorb its park.Set() so the next episode starts clean, and put a setter's signal
            // back (Unset→Signaled; fails harmlessly if Dispose took it) so it is not lost.
            WaitUninterruptibly(park);
            Interlocked.CompareExchange(ref _state, Signaled, Unset); // full fence, as in Set
            throw;
        }
        if (!woken && TryWithdraw())
        {
            return false;
        }
        return Consume(park, woken);
    }

    /// <summary>Gives up a claimed Waiting state; false when a setter or Dispose took it first.</summary>
    private bool TryWithdraw()
        => Interlocked.CompareExchange(ref _state, Unset, Waiting) == Waiting; // full fence; decides waker vs withdrawer

    private bool Consume(AutoResetEvent park, bool woken)
    {
        // Not yet woken: the waker took our Waiting state and its park.Set() is a few instructions
        // away. Waiting for it consumes the park's signal, so the next blocking episode starts clean.
        if (!woken) WaitUninterruptibly(park);
        if (Volatile.Read(ref _wokenByDispose)) ThrowHelper.ThrowObjectDisposed(this); // acquire: pairs with Dispose's write, ordered by the park
        Debug.Assert(Volatile.Read(ref _state) != Waiting, "Nobody else may claim Waiting while we have not returned.");
        return true;
    }

    /// <summary>
    /// Waits for a Set that is known to be coming (a few instructions away on the waker's thread); an
    /// interrupt meanwhile is held back and re-raised afterwards, so the park never keeps a stale signal.
    /// </summary>
    private static void WaitUninterruptibly(AutoResetEvent park)
    {
        bool interrupted = false;
        while (true)
        {
            try
            {
                park.WaitOne();
                break;
            }
            catch (ThreadInterruptedException)
            {
                interrupted = true;
            }
        }
        if (interrupted) Thread.CurrentThread.Interrupt(); // the caller's next blocking call sees it
    }

    /// <summary>The due timestamp of an infinite wait.</summary>
    private const long NoDue = long.MaxValue;

    /// <summary>Now plus <paramref name="timeoutTicks"/> on the event's clock, rounded up to its next timestamp unit.</summary>
    private long DueTimestamp(long timeoutTicks)
    {
        long frequency = _timeProvider.TimestampFrequency;
        Int128 span = ((Int128)timeoutTicks * frequency + TimeSpan.TicksPerSecond - 1) / TimeSpan.TicksPerSecond;
        long now = _timeProvider.GetTimestamp();
        return span >= NoDue - now ? NoDue - 1 : now + (long)span;
    }

    /// <summary>Timestamp units left until <paramref name="due"/> on the event's clock; zero or less once it has passed.</summary>
    private long Left(long due) => due - _timeProvider.GetTimestamp();

    /// <summary>Blocks until woken (true), the due time passes (false) or the token is cancelled (throws).</summary>
    private bool ParkWait(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        if (due != NoDue && !ReferenceEquals(_timeProvider, TimeProvider.System))
        {
            return ParkWaitOnClock(park, due, cancellationToken);
        }
        while (true)
        {
            int milliseconds = Timeout.Infinite;
            if (due != NoDue)
            {
                long left = Left(due);
                if (left <= 0) return false;
                // Rounded up: a kernel wait of whole milliseconds never ends before the due time, except
                // that it may (its clock is coarser than the timestamps); then the loop waits for the rest.
                Int128 ms = ((Int128)left * 1000 + _timeProvider.TimestampFrequency - 1) / _timeProvider.TimestampFrequency;
                milliseconds = ms >= int.MaxValue ? int.MaxValue : (int)ms;
            }
            if (!cancellationToken.CanBeCanceled)
            {
                if (park.WaitOne(milliseconds)) return true;
                continue;
            }
            // Index 0 wins when both are signalled, so a delivered signal is never left behind.
            int index = WaitHandle.WaitAny([park, cancellationToken.WaitHandle], milliseconds);
            if (index == 1) throw new OperationCanceledException(cancellationToken);
            if (index == 0) return true;
        }
    }

    private bool ParkWaitOnClock(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        while (true)
        {
            long left = Left(due);
            if (left <= 0) return false;
            // An injected clock: the timeout is a cancellation driven by that clock's timer, for the time
            // left on it (rounded up to a tick), so time that passed before the waiter blocked counts.
            long frequency = _timeProvider.TimestampFrequency;
            Int128 ticks = ((Int128)left * TimeSpan.TicksPerSecond + frequency - 1) / frequency;
            using var timeout = new CancellationTokenSource(TimeSpan.FromTicks(ticks >= long.MaxValue ? long.MaxValue : (long)ticks), _timeProvider);
            // The timer counts from when it was made, the time left from when the clock was read: if the clock moved on
            // in between (a test's clock advanced while this thread was between the two), the timer would fire late by
            // that much, perhaps never within the test's time. Read again, and start over if it moved by more than 1 ms.
            if (due - _timeProvider.GetTimestamp() < left - Math.Max(1, frequency / 1000)) continue;
            using var linked = cancellationToken.CanBeCanceled
                ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token)
                : null;
            int index = WaitHandle.WaitAny([park, (linked ?? timeout).Token.WaitHandle]);
            if (index == 0) return true;
            if (cancellationToken.IsCancellationRequested) throw new OperationCanceledException(cancellationToken);
            // The clock's timer fired: the loop checks the clock itself, in case the timer was early.
        }
    }

    // Telemetry: how often waits had to block, over every event in the process.

    // Observable: reads the counter the slow path keeps anyway; the fast paths pay nothing. Process-wide: an event has
    // no name, and tracking every live event for a per-instance tag would cost each one, so only the kind tag is set.
    private static readonly ObservableCounter<long> s_blockedWaitsInstrument = ManalocMeters.Threading.CreateObservableCounter(
        "manaloc.reset_event.blocked_waits",
        () => new Measurement<long>(BlockedWaits, new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "reset-event")),
        unit: "{wait}",
        description: "Waits on an EconomicResetEvent that found it unset after spinning and blocked.");
}
