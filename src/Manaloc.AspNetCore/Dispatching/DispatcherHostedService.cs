using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace Manaloc.AspNetCore.Dispatching;

/// <summary>
/// Starts a <see cref="HostedDispatcher"/> when the host is starting (before the server takes requests)
/// and drains it when the host has stopped (after the server has let requests in flight finish).
/// </summary>
internal sealed class DispatcherHostedService(HostedDispatcher dispatcher, IOptions<HostOptions> hostOptions) : IHostedLifecycleService, IDisposable
{
    public Task StartingAsync(CancellationToken cancellationToken)
    {
        dispatcher.Start();
        return Task.CompletedTask;
    }

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => dispatcher.StopAsync(hostOptions.Value.ShutdownTimeout, cancellationToken);

    /// <summary>The container is disposed: a host whose start failed after "starting" never reaches "stopped", so the threads end here.</summary>
    public void Dispose() => dispatcher.Abort();
}
