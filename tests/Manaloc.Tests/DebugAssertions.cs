using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Tests;

/// <summary>
/// Makes a failed <see cref="Debug.Assert(bool)"/> throw <see cref="DebugAssertException"/> in the
/// thread that broke the invariant, instead of the runtime's default (<see cref="Environment.FailFast(string)"/> with no debugger attached,
/// which kills the test host and loses which test it was). Matters for the Debug leg of CI
/// (<c>.ci/steps/20-debug-asserts.sh</c>), where the library's invariants are compiled in: a test thread
/// fails its test with the message; a background thread's exception is unhandled, so the host stops
/// and prints it (the step then fails), never silently.
/// </summary>
internal static class DebugAssertions
{
    /// <summary>Failed assertions so far, over the whole run (also those swallowed by a catch-all).</summary>
    public static int Failures => Volatile.Read(ref s_failures);

    private static int s_failures;

    [ModuleInitializer]
    internal static void Install()
    {
        // Touching Trace.Listeners routes Debug.Assert/Debug.Fail through the trace listeners; the default
        // one would FailFast (no debugger attached), so it is replaced by one that throws.
        Trace.Listeners.Clear();
        Trace.Listeners.Add(new ThrowingListener());
    }

    private sealed class ThrowingListener : TraceListener
    {
        public override void Fail(string? message, string? detailMessage)
        {
            Interlocked.Increment(ref s_failures);
            throw new DebugAssertException($"Debug.Assert failed: {message} {detailMessage}".TrimEnd());
        }

        public override void Fail(string? message) => Fail(message, null);

        public override void Write(string? message)
        {
        }

        public override void WriteLine(string? message)
        {
        }
    }
}

/// <summary>A failed <see cref="Debug.Assert(bool)"/> in a test run.</summary>
public sealed class DebugAssertException(string message) : Exception(message);

public sealed class DebugAssertionsTests
{
    [Fact]
    public void A_failed_trace_assertion_throws_instead_of_killing_the_host()
    {
        // Trace.Assert is compiled in both legs (TRACE is defined in Release and Debug) and goes through
        // the same listeners as Debug.Assert once Trace is initialized.
        int before = DebugAssertions.Failures;
        var e = Assert.Throws<DebugAssertException>(() => Trace.Assert(false, "an invariant", "broken on purpose"));
        Assert.Contains("an invariant", e.Message);
        Assert.Equal(before + 1, DebugAssertions.Failures);
    }

#if DEBUG
    [Fact]
    public void In_the_debug_leg_a_failed_debug_assertion_throws()
    {
        var e = Assert.Throws<DebugAssertException>(() => Debug.Assert(false, "an invariant"));
        Assert.Contains("an invariant", e.Message);
    }

    [Fact]
    public void In_the_debug_leg_the_library_is_built_with_its_assertions()
    {
        // A Debug build of the library: the JIT optimizer is disabled and, with it, DEBUG is defined,
        // so its Debug.Assert calls are in the code the concurrency tests run.
        var debuggable = typeof(Manaloc.Threading.EconomicResetEvent).Assembly.GetCustomAttributes(typeof(DebuggableAttribute), false)
            .Cast<DebuggableAttribute>().SingleOrDefault();
        Assert.NotNull(debuggable);
        Assert.True(debuggable.IsJITOptimizerDisabled, "the library under test was built in Release: its Debug.Assert calls are compiled out");
    }
#endif
}
