using System.Collections.Concurrent;
using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Manaloc.AspNetCore.Tests;

/// <summary>A real Kestrel on 127.0.0.1, port 0, with the test's services, endpoints and configuration; logs kept in memory.</summary>
internal sealed class TestHost : IAsyncDisposable
{
    private TestHost(WebApplication app, Uri address, LogSink logs)
    {
        App = app;
        Address = address;
        Logs = logs;
        Client = new HttpClient { BaseAddress = address, Timeout = TimeSpan.FromMinutes(2) };
    }

    public WebApplication App { get; }
    public Uri Address { get; }
    public LogSink Logs { get; }
    public HttpClient Client { get; }
    public IServiceProvider Services => App.Services;

    /// <summary>Builds the application; <see cref="StartAsync"/> starts it (separate, so a test can see the start fail).</summary>
    public static WebApplication Build(Action<IServiceCollection> services, Action<WebApplication>? endpoints = null,
        IDictionary<string, string?>? configuration = null, LogSink? logs = null, TimeSpan? shutdownTimeout = null)
    {
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { EnvironmentName = "Production" });
        builder.WebHost.UseKestrel(o => o.Listen(IPAddress.Loopback, 0));
        if (configuration is not null) builder.Configuration.AddInMemoryCollection(configuration);
        builder.Logging.ClearProviders();
        builder.Logging.AddProvider(logs ?? new LogSink());
        if (shutdownTimeout is { } timeout) builder.Services.Configure<Microsoft.Extensions.Hosting.HostOptions>(o => o.ShutdownTimeout = timeout);
        services(builder.Services);
        var app = builder.Build();
        endpoints?.Invoke(app);
        return app;
    }

    public static async Task<TestHost> StartAsync(Action<IServiceCollection> services, Action<WebApplication>? endpoints = null,
        IDictionary<string, string?>? configuration = null, TimeSpan? shutdownTimeout = null)
    {
        var logs = new LogSink();
        var app = Build(services, endpoints, configuration, logs, shutdownTimeout);
        await app.StartAsync();
        string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        return new TestHost(app, new Uri(address), logs);
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await App.StopAsync();
        await App.DisposeAsync();
    }
}

/// <summary>Every log message, kept for the test to read.</summary>
internal sealed class LogSink : ILoggerProvider
{
    public ConcurrentQueue<(LogLevel Level, string Category, string Message)> Entries { get; } = new();

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    public bool Contains(LogLevel level, string text) => Entries.Any(e => e.Level == level && e.Message.Contains(text, StringComparison.Ordinal));

    private sealed class Logger(LogSink sink, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;
        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Information;
        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel)) sink.Entries.Enqueue((logLevel, category, formatter(state, exception)));
        }
    }
}
