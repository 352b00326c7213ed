using System.Net;
using System.Net.Sockets;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class UdpSendTests
{
    [Fact]
    public void The_smoke_run_closes_every_socket_and_reports_sent_received_and_lost()
    {
        var experiment = new UdpSend();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());

        Assert.Null(result.Error);
        Assert.Equal(0, experiment.SocketsOpen);
        Assert.Equal(3, experiment.SocketsOpened); // receiver, unconnected and connected sender
        Assert.Equal(experiment.Variants.Count, result.Measurements.Count);
        Assert.All(result.Measurements, m =>
        {
            Assert.Equal("datagrams/s", m.Unit);
            Assert.Equal(2_000, m.Metrics["sent"]);
            Assert.InRange(m.Metrics["received"], 0, m.Metrics["sent"]);
            Assert.Equal(m.Metrics["sent"] - m.Metrics["received"], m.Metrics["lost"]);
        });
        // The receiver's port is free again: its socket was closed.
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, experiment.LastPort));
    }
}
