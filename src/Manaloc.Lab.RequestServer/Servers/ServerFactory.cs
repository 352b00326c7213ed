namespace Manaloc.Lab.RequestServer.Servers;

/// <summary>Starts a server of a chosen build.</summary>
public static class ServerFactory
{
    /// <summary>The builds' names on the command line, in display order.</summary>
    public static IReadOnlyList<string> BuildNames { get; } = ["manaloc", "bcl", "kestrel", "kestrel-manaloc"];

    /// <summary>Parses a build name (case-insensitive).</summary>
    /// <exception cref="ArgumentException">Not one of <see cref="BuildNames"/>.</exception>
    public static ServerBuild Parse(string name) => name.ToLowerInvariant() switch
    {
        "manaloc" => ServerBuild.Manaloc,
        "bcl" => ServerBuild.Bcl,
        "kestrel" => ServerBuild.Kestrel,
        "kestrel-manaloc" => ServerBuild.KestrelManaloc,
        _ => throw new ArgumentException($"Unknown build '{name}': expected one of {string.Join(", ", BuildNames)}.", nameof(name)),
    };

    /// <summary>The command-line name of <paramref name="build"/>.</summary>
    public static string NameOf(ServerBuild build) => build == ServerBuild.KestrelManaloc ? "kestrel-manaloc" : build.ToString().ToLowerInvariant();

    /// <summary>Starts a server of <paramref name="build"/> listening on 127.0.0.1.</summary>
    public static async Task<IRequestServer> StartAsync(ServerBuild build, ServerOptions? options = null)
    {
        options ??= new ServerOptions();
        if (options.Workers < 1 || options.ConnectionShare < 1 || options.MaxConnections < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(options), options, "Workers, connection share and connection cap must be at least 1.");
        }
        return build switch
        {
            ServerBuild.Manaloc => Manaloc.ManalocServer.Start(options),
            ServerBuild.Bcl => Bcl.BclServer.Start(options),
            ServerBuild.Kestrel or ServerBuild.KestrelManaloc => await Kestrel.KestrelRequestServer.StartAsync(options, build).ConfigureAwait(false),
            _ => throw new ArgumentOutOfRangeException(nameof(build), build, "Unknown build."),
        };
    }
}
