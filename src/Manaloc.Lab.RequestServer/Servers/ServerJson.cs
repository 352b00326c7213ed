using System.Text.Json.Serialization;

namespace Manaloc.Lab.RequestServer.Servers;

/// <summary>
/// The serializer's code for what a server process writes (its stats answer and its shutdown report), generated at build
/// time: a server child writes both through it, so it jits no reflection-based serializer code of its own, which cost
/// each child more CPU at its first stats answer and at its shutdown than anything else it does outside the load.
/// </summary>
/// <remarks>
/// Default options (property names as declared, as the reflection-based serializer writes them), so a reader that uses
/// the serializer without this context reads the same text.
/// </remarks>
[JsonSerializable(typeof(ServerStats))]
[JsonSerializable(typeof(ShutdownReport))]
internal sealed partial class ServerJson : JsonSerializerContext;
