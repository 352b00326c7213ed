using System.Diagnostics;

namespace Manaloc.Lab.Harness;

/// <summary>What a child process sent back: its measurements, named values and notes.</summary>
public sealed record ChildOutput
{
    /// <summary>Measurements the child recorded.</summary>
    public IReadOnlyList<Measurement> Measurements { get; init; } = [];
    /// <summary>Named values the child recorded.</summary>
    public IReadOnlyDictionary<string, double> Values { get; init; } = new Dictionary<string, double>();
    /// <summary>Named texts the child recorded.</summary>
    public IReadOnlyDictionary<string, string> Texts { get; init; } = new Dictionary<string, string>();
    /// <summary>Notes the child recorded.</summary>
    public IReadOnlyList<string> Notes { get; init; } = [];
    /// <summary>Tables the child recorded (a launch sends its whole report part back).</summary>
    public IReadOnlyList<ResultTable> Tables { get; init; } = [];
    /// <summary>The child's machine view (GC mode, affinity) — what its environment actually gave it.</summary>
    public MachineInfo? Machine { get; init; }
}

/// <summary>
/// Runs a piece of an experiment in a fresh lab process with chosen environment variables, so a
/// setting that only takes effect at start-up (GC mode, affinity, time zone) is real.
/// </summary>
/// <remarks>
/// The child is this same lab assembly started through the dotnet host as
/// <c>dotnet exec Manaloc.Lab.dll child &lt;experiment&gt; &lt;key&gt; …</c>. It writes one line
/// that starts with <see cref="Marker"/> followed by a JSON <see cref="ChildOutput"/> (written by <see cref="ChildOutputJson"/>,
/// read with the serializer and <see cref="LabJson.Options"/>); everything
/// else it prints is ignored. Every child starts with <see cref="CallCountingDelayVariable"/> = 0 (see
/// <see cref="RunSettings.Quick"/>) unless the experiment's environment says otherwise. A child that exits non-zero, prints no result line or outlives its
/// timeout raises <see cref="ChildProcessException"/>, and a timed-out child is killed with its tree.
/// </remarks>
public static class ChildProcess
{
    /// <summary>The runtime setting every lab child gets as 0: tiered compilation's delay before it starts counting calls.</summary>
    public const string CallCountingDelayVariable = "DOTNET_TC_CallCountingDelayMs";

    /// <summary>Prefix of the one line that carries the child's result.</summary>
    public const string Marker = "##manaloc-child-result##";

    /// <summary>The lab's entry assembly on disk.</summary>
    public static string LabAssemblyPath => typeof(ChildProcess).Assembly.Location;

    /// <summary>Set to 1 in a child whose parent runs <see cref="UntimedWork"/> in its untimed windows: the child then
    /// announces each window (<see cref="ExperimentContext.Untimed"/>) and waits for the parent's answer before it times again.</summary>
    public const string UntimedWindowsVariable = "MANALOC_LAB_UNTIMED_WINDOWS";

    /// <summary>The child's line on stdout as it enters an untimed window.</summary>
    internal const string UntimedMarker = "##manaloc-child-untimed##";

    /// <summary>The child's line on stdout as it leaves an untimed window; it then reads one line from stdin, the parent's
    /// answer that its untimed work is parked.</summary>
    internal const string TimedMarker = "##manaloc-child-timed##";

    /// <summary>Runs the lab with <paramref name="labArguments"/> in a child process and returns its result.</summary>
    /// <param name="labArguments">The lab's command line.</param>
    /// <param name="environment">Variables to set (null removes one).</param>
    /// <param name="timeout">How long the child may take.</param>
    /// <param name="cancellation">Stops the child.</param>
    /// <param name="untimedWork">Work to run only while the child is in an untimed window, or null: opened as the child
    /// enters one, closed (every thread parked) before the child is answered as it leaves, closed when the child ends.</param>
    public static ChildOutput Run(
        IReadOnlyList<string> labArguments,
        IReadOnlyDictionary<string, string?>? environment,
        TimeSpan timeout,
        CancellationToken cancellation = default,
        UntimedWork? untimedWork = null)
    {
        var start = new ProcessStartInfo(FindDotnetHost())
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add("exec");
        start.ArgumentList.Add(LabAssemblyPath);
        foreach (string arg in labArguments) start.ArgumentList.Add(arg);
        // The child must not inherit a GC or tiering setting meant for the parent only.
        foreach (string key in new[] { "DOTNET_gcServer", "DOTNET_GCgen0size", "DOTNET_gcConcurrent", UntimedWindowsVariable })
        {
            start.Environment.Remove(key);
        }
        if (untimedWork is not null) start.Environment[UntimedWindowsVariable] = "1";
        // Tiered compilation counts calls from the start instead of after 100 ms without new tier-0 code (a delay that
        // every newly jitted body restarts), so a measurement's code reaches the same tier-1, PGO-optimised code within
        // the warm-up (RunSettings.WarmUp). The environment below may still set it otherwise.
        start.Environment[CallCountingDelayVariable] = "0";
        if (environment is not null)
        {
            foreach (var (key, value) in environment)
            {
                if (value is null) start.Environment.Remove(key);
                else start.Environment[key] = value;
            }
        }

        var clock = Stopwatch.StartNew();
        using var process = Process.Start(start) ?? throw new ChildProcessException("The child process did not start.");
        if (untimedWork is null) process.StandardInput.Close();
        var stdout = ReadOutputAsync(process.StandardOutput, clock, untimedWork is null ? null : (untimedWork, process.StandardInput), cancellation);
        var stderr = process.StandardError.ReadToEndAsync(cancellation);
        bool exited;
        try
        {
            exited = process.WaitForExitAsync(cancellation).Wait(timeout);
        }
        catch (AggregateException e) when (e.InnerException is OperationCanceledException)
        {
            exited = false;
        }
        finally
        {
            // Whatever the child did last, the work is parked before the parent goes on (to its next child, say).
            untimedWork?.Close();
        }
        if (!exited)
        {
            try { process.Kill(entireProcessTree: true); } catch (InvalidOperationException) { /* already gone */ }
            process.WaitForExit();
            if (untimedWork is not null)
            {
                // A window line still being read could open the work again: read the rest first, then park it.
                try { stdout.Wait(TimeSpan.FromSeconds(5)); } catch (AggregateException) { /* the child's output is not needed any more */ }
                untimedWork.Close();
            }
            cancellation.ThrowIfCancellationRequested();
            throw new ChildProcessException($"The child process ({string.Join(' ', labArguments)}) did not finish within {timeout.TotalSeconds:0.#} s and was killed.");
        }
        double exitedAt = clock.Elapsed.TotalSeconds;
        var (output, resultAt) = stdout.GetAwaiter().GetResult();
        untimedWork?.Close();
        if (untimedWork is not null) process.StandardInput.Dispose();
        string errors = stderr.GetAwaiter().GetResult();
        TimingLog.Write(labArguments, errors, resultAt, exitedAt);
        if (process.ExitCode != 0)
        {
            throw new ChildProcessException($"The child process ({string.Join(' ', labArguments)}) exited with code {process.ExitCode}: {LastLine(errors)}");
        }
        string? line = output.Split('\n').Select(l => l.TrimEnd('\r')).LastOrDefault(l => l.StartsWith(Marker, StringComparison.Ordinal));
        if (line is null)
        {
            throw new ChildProcessException($"The child process ({string.Join(' ', labArguments)}) printed no result line. {LastLine(errors)}");
        }
        return ChildOutputJson.Read(line.AsSpan(Marker.Length))
            ?? throw new ChildProcessException("The child process's result line was empty.");
    }

    /// <summary>Reads the child's whole output, noting when the result line arrived (seconds on <paramref name="clock"/>).</summary>
    /// <remarks>With untimed work, a window's lines open and close it; a closing one is answered on the child's stdin once
    /// the work is parked (the child waits for that line before it times anything).</remarks>
    private static async Task<(string Output, double ResultAt)> ReadOutputAsync(
        StreamReader reader, Stopwatch clock, (UntimedWork Work, StreamWriter ChildInput)? windows, CancellationToken cancellation)
    {
        var text = new System.Text.StringBuilder();
        double resultAt = double.NaN;
        while (await reader.ReadLineAsync(cancellation).ConfigureAwait(false) is { } line)
        {
            if (windows is { } w)
            {
                if (line == UntimedMarker)
                {
                    w.Work.Open();
                    continue;
                }
                if (line == TimedMarker)
                {
                    w.Work.Close();
                    try
                    {
                        await w.ChildInput.WriteLineAsync().ConfigureAwait(false);
                        await w.ChildInput.FlushAsync(cancellation).ConfigureAwait(false);
                    }
                    catch (IOException)
                    {
                        // The child is gone; its exit code says why.
                    }
                    continue;
                }
            }
            if (line.StartsWith(Marker, StringComparison.Ordinal)) resultAt = clock.Elapsed.TotalSeconds;
            text.Append(line).Append('\n');
        }
        return (text.ToString(), resultAt);
    }

    /// <summary>True in a child whose parent runs untimed work in its windows (<see cref="UntimedWindowsVariable"/>).</summary>
    internal static bool AnnouncesUntimedWindows => Environment.GetEnvironmentVariable(UntimedWindowsVariable) == "1";

    /// <summary>In the child: tells the parent an untimed window starts. Written to the standard output's handle directly,
    /// keeping no object alive (a child may be weighing its managed heap across the window).</summary>
    internal static void AnnounceUntimed()
    {
        using var stdout = Console.OpenStandardOutput();
        stdout.Write("##manaloc-child-untimed##\n"u8);
    }

    /// <summary>In the child: tells the parent the untimed window ends and returns once the parent answers that its work is parked.</summary>
    /// <exception cref="InvalidOperationException">The parent closed the child's input without answering.</exception>
    internal static void AnnounceTimed()
    {
        using (var stdout = Console.OpenStandardOutput()) stdout.Write("##manaloc-child-timed##\n"u8);
        using var stdin = Console.OpenStandardInput();
        Span<byte> one = stackalloc byte[1];
        while (true)
        {
            if (stdin.Read(one) == 0) throw new InvalidOperationException("The parent closed the child's input before it answered the end of an untimed window: its untimed work may still run.");
            if (one[0] == (byte)'\n') return;
        }
    }

    /// <summary>Formats a child's output as its result line (<see cref="ChildOutputJson"/>: no serializer code to jit in the child).</summary>
    public static string FormatResultLine(ChildOutput output)
        => Marker + ChildOutputJson.Write(output);

    /// <summary>What a failed child said last, and, when it died of an unhandled exception, that exception's line too (its
    /// stack ends at a thread's start, which alone names no cause).</summary>
    private static string LastLine(string text)
    {
        var lines = text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        string last = lines.LastOrDefault() ?? "";
        string? unhandled = lines.FirstOrDefault(l => l.StartsWith("Unhandled exception.", StringComparison.Ordinal));
        return unhandled is null || unhandled == last ? last : $"{unhandled} … {last}";
    }

    /// <summary>The dotnet host: this process if it is one, else DOTNET_HOST_PATH, else the runtime's root, else PATH.</summary>
    internal static string FindDotnetHost()
    {
        string exe = OperatingSystem.IsWindows() ? "dotnet.exe" : "dotnet";
        if (Environment.ProcessPath is { } self && Path.GetFileName(self).Equals(exe, StringComparison.OrdinalIgnoreCase))
        {
            return self;
        }
        if (Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } hostPath && File.Exists(hostPath))
        {
            return hostPath;
        }
        // <root>/shared/Microsoft.NETCore.App/<version>/ → <root>/dotnet
        string runtimeDir = System.Runtime.InteropServices.RuntimeEnvironment.GetRuntimeDirectory();
        string candidate = Path.GetFullPath(Path.Combine(runtimeDir, "..", "..", "..", exe));
        return File.Exists(candidate) ? candidate : exe;
    }
}

/// <summary>A child process failed, timed out or returned no result.</summary>
public sealed class ChildProcessException(string message) : Exception(message);
