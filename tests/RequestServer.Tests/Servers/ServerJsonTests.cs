using System.Text;
using System.Text.Json;
using Manaloc.Lab.RequestServer.Servers;

namespace RequestServer.Tests.Servers;

/// <summary>A server process writes its stats and shutdown report through generated code; the reader gets every figure back.</summary>
public sealed class ServerJsonTests
{
    private static readonly ServerStats EveryFigure = new()
    {
        Build = "kestrel-manaloc", Received = 1, Ok = 2, Busy = 3, Expired = 4, Error = 5, Unanswered = 6, ShutdownBusy = 7,
        MalformedStreams = 8, Truncated = 9, Connections = 10, Refused = 11, AllocatedBytes = 12, Gen0 = 13, Gen1 = 14, Gen2 = 15,
        GcPauseMs = 16.5, PeakWorkingSetBytes = 17,
    };

    [Fact]
    public void Stats_round_trip_and_read_as_the_reflection_serializer_writes_them()
    {
        byte[] json = EveryFigure.ToJsonUtf8();

        Assert.Equal(EveryFigure, ServerStats.FromJsonUtf8(json));
        // The same text as the serializer without the generated context, so either can read what the other wrote.
        Assert.Equal(JsonSerializer.Serialize(EveryFigure, new JsonSerializerOptions()), Encoding.UTF8.GetString(json));
    }

    [Fact]
    public void A_shutdown_report_round_trips()
    {
        var report = new ShutdownReport(EveryFigure, TimeSpan.FromMilliseconds(1234.5), 3);
        string json = JsonSerializer.Serialize(report, ServerJson.Default.ShutdownReport);

        Assert.Equal(report, JsonSerializer.Deserialize(json, ServerJson.Default.ShutdownReport));
        Assert.Equal(JsonSerializer.Serialize(report, new JsonSerializerOptions()), json);
    }
}
