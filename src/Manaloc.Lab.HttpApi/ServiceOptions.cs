namespace HttpApi;

/// <summary>The command line: which build, which port.</summary>
public sealed record ServiceOptions(bool Manaloc, int Port, int ClientShare, int DispatcherThreads, bool StopOnStdinEof, string? AllocationProfile = null, double IdleReleaseSeconds = 1)
{
    public string BuildName => Manaloc ? "manaloc" : "defaults";

    public const string Help = """
        HttpApi: a minimal-API service (System.Text.Json in and out, a CPU-bound endpoint, a pooled object per request from DI)
        in two builds, to compare ASP.NET Core's defaults with Manaloc wired in under the same load.

        Usage: dotnet run --project samples/HttpApi -c Release -- [--build defaults|manaloc] [--port N] [--share N] [--threads N] [--idle-release S] [--stop-on-stdin-eof]

        Builds (--build, default: defaults):
          defaults  ASP.NET Core as a new project has it: Kestrel's own memory pool, DefaultObjectPoolProvider, the JSON
                    endpoint serialized by minimal APIs, the CPU-bound work run on the request's thread-pool thread.
          manaloc   AddManalocKestrelMemoryPool (Kestrel's socket transport rents from a BufferMemoryPool),
                    AddManalocObjectPools (ObjectPool<T> is a per-thread SemiLocalPool), AddDedicatedDispatcher("cpu")
                    (CPU-bound work on dedicated threads; a client over its share, by the X-Client header, waits in its
                    line and past it gets 429), AddManalocIdleRelease (when no request has come for a while, the pools
                    are trimmed and one aggressive GC gives the memory back), the order read into pooled objects, and
                    the JSON answer serialized into pooled buffers by ManalocResults.Json, given back once the body is
                    flushed (Debug builds poison every buffer given back: a late reader sees 0xDD, not another request's data).

        Endpoints:
          POST /api/orders         JSON order in, JSON summary out (duplicate SKUs found with a pooled set from DI)
          GET  /api/primes/{n}     counts primes up to n (1 to 1,000,000): CPU-bound
          GET  /stats              allocated bytes, GC counts and pause, working set, requests served, Manaloc's counters

        Options:
          --port N               port on 127.0.0.1 (default 5080; 0 picks a free one, printed on the first line)
          --share N              manaloc: CPU work items one client may have queued or running (default 1; keep it below
                                 --threads, or one client can hold every worker)
          --threads N            manaloc: the dispatcher's threads (default: the processor count)
          --idle-release S       manaloc: seconds without a request before the idle release (default 1, so the lab's
                                 quick 2 s wait sees it; a real service would wait tens of seconds; 0 turns it off)
          --stop-on-stdin-eof    stop gracefully when standard input closes (the lab's child processes)
          --allocation-profile P when stopping, write the allocated types (sampled by the runtime's allocation tick) to
                                 file P; {build} in P is replaced by the build's name. The environment variable
                                 HTTPAPI_ALLOCATION_PROFILE does the same (for the lab's child processes)

        Load: the lab's `http` experiment starts both builds as child processes on 127.0.0.1 and sends the same load to
        each: polite HTTP/1.1 keep-alive clients at a fixed rate (open loop, latency from the intended send time), then
        the same beside one flooding client, then a saturating load; every request is accounted for.
          dotnet run --project src/Manaloc.Lab -c Release -- run http --quick
        """;

    /// <summary>Parses the arguments; null when help was asked for.</summary>
    /// <exception cref="ArgumentException">An argument is unknown or out of range; the message names it.</exception>
    public static ServiceOptions? Parse(string[] args)
    {
        bool manaloc = false, stop = false;
        string? profile = Environment.GetEnvironmentVariable("HTTPAPI_ALLOCATION_PROFILE") is { Length: > 0 } p ? p : null;
        int port = 5080, share = 1, threads = Environment.ProcessorCount;
        double idleRelease = 1;
        for (int i = 0; i < args.Length; i++)
        {
            string Value() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value.");
            int Number(string name, int min, int max)
            {
                string text = Value();
                return int.TryParse(text, out int n) && n >= min && n <= max ? n : throw new ArgumentException($"{name} must be a number from {min} to {max} (was '{text}').");
            }
            switch (args[i])
            {
                case "--help" or "-h" or "-?":
                    return null;
                case "--build":
                    string build = Value();
                    manaloc = build switch
                    {
                        "manaloc" => true,
                        "defaults" => false,
                        _ => throw new ArgumentException($"--build must be 'defaults' or 'manaloc' (was '{build}')."),
                    };
                    break;
                case "--port": port = Number("--port", 0, 65535); break;
                case "--share": share = Number("--share", 1, 1_000_000); break;
                case "--threads": threads = Number("--threads", 1, 1024); break;
                case "--idle-release":
                    string seconds = Value();
                    idleRelease = double.TryParse(seconds, System.Globalization.NumberStyles.Float, System.Globalization.CultureInfo.InvariantCulture, out double s) && (s == 0 || s is >= 0.1 and <= 86_400)
                        ? s : throw new ArgumentException($"--idle-release must be 0 or a number of seconds from 0.1 to 86400 (was '{seconds}').");
                    break;
                case "--stop-on-stdin-eof": stop = true; break;
                case "--allocation-profile": profile = Value(); break;
                default: throw new ArgumentException($"Unknown argument '{args[i]}' (see --help).");
            }
        }
        return new ServiceOptions(manaloc, port, share, threads, stop, profile, idleRelease);
    }
}
