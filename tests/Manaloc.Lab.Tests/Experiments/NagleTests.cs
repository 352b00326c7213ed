using System.Net;
using System.Net.Sockets;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class NagleTests
{
    [Fact]
    public void The_smoke_run_closes_every_socket_and_reports_its_rounds()
    {
        var experiment = new Nagle();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());

        Assert.Null(result.Error);
        Assert.Equal(0, experiment.SocketsOpen);
        Assert.Equal(9, experiment.SocketsOpened); // listener, client and accepted connection per variant
        Assert.Equal(3, result.Measurements.Count);
        Assert.All(result.Measurements, m =>
        {
            Assert.Equal(m.Statistics.Count, (int)m.Metrics["rounds"]);
            Assert.True(m.Metrics["rounds"] > 0);
            Assert.InRange(m.Metrics["stalls"], 0, m.Metrics["rounds"]);
        });
        // The last listener is closed: nothing accepts on its port any more.
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var error = Assert.Throws<SocketException>(() => probe.Connect(new IPEndPoint(IPAddress.Loopback, experiment.LastPort)));
        Assert.Equal(SocketError.ConnectionRefused, error.SocketErrorCode);
    }

    [Fact]
    public void Rounds_are_bounded_by_the_time_budget()
    {
        var experiment = new Nagle();
        var samples = experiment.RunRounds(noDelay: true, twoWrites: true, rounds: 1_000_000, budget: TimeSpan.FromMilliseconds(200));

        Assert.InRange(samples.Count, 1, 999_999);
        Assert.Equal(0, experiment.SocketsOpen);
    }
}
