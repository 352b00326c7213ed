using System.Diagnostics;
using System.Net;
using Manaloc.Lab.RequestServer;

namespace RequestServer.Tests;

/// <summary>A line the child writes as an event: waited for whether it came before or after the wait began, and never waited for past the child's end.</summary>
public sealed class ListeningProcessTests
{
    private static Task<ListeningProcess> StartSampleAsync()
    {
        var launch = TestServers.SampleLaunch();
        var start = new ProcessStartInfo(launch.FileName);
        foreach (string argument in launch.Arguments.Concat(["--build", "bcl", "--port", "0", "--stop-on-eof"])) start.ArgumentList.Add(argument);
        return ListeningProcess.StartAsync(start, "bcl server",
            line => line.StartsWith(ServeCommand.ListeningPrefix, StringComparison.Ordinal) ? IPEndPoint.Parse(line.AsSpan(ServeCommand.ListeningPrefix.Length)) : null,
            TimeSpan.FromSeconds(30));
    }

    private static bool IsReport(string line) => line.StartsWith(ServeCommand.ReportPrefix, StringComparison.Ordinal);

    [Fact]
    public async Task A_wait_ends_on_the_line_it_waits_for_and_a_wait_for_a_line_never_written_fails_when_the_output_ends()
    {
        using var child = await StartSampleAsync();
        // The server writes its report only once it is asked to stop: until then the wait is open.
        var report = child.WaitForLineAsync(IsReport);
        var never = child.WaitForLineAsync(line => line == "a line the server never writes");
        using var cancel = new CancellationTokenSource();
        var canceled = child.WaitForLineAsync(_ => false, cancel.Token);
        Assert.False(report.IsCompleted);
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => canceled);

        var stopped = await child.StopAsync(TimeSpan.FromSeconds(30));

        string line = await report.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.True(IsReport(line), line);
        Assert.Contains(line, stopped.Output);
        await Assert.ThrowsAsync<InvalidOperationException>(() => never.WaitAsync(TimeSpan.FromSeconds(30)));
        // A wait that begins after the line was written finds it at once.
        var late = child.WaitForLineAsync(IsReport);
        Assert.True(late.IsCompletedSuccessfully);
        Assert.Equal(line, await late);
        // And one that begins after the output ended, for a line never written, fails at once.
        Assert.True(child.WaitForLineAsync(l => l == "still never").IsFaulted);
    }
}
