using Manaloc.AspNetCore.Dispatching;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Manaloc.AspNetCore.Tests;

/// <summary>Options come from the host's configuration; a bad value fails the start with a message naming the key.</summary>
public sealed class ConfigurationTests
{
    private static async Task<Exception> StartFails(Action<IServiceCollection> services, Dictionary<string, string?> configuration)
    {
        await using var app = TestHost.Build(services, configuration: configuration);
        return await Assert.ThrowsAnyAsync<Exception>(() => app.StartAsync());
    }

    [Theory]
    [InlineData("ThreadCount", "0", "Manaloc:Dispatchers:cpu:ThreadCount must be between 1 and 1024 (was 0)")]
    [InlineData("ClientShare", "-1", "Manaloc:Dispatchers:cpu:ClientShare must be at least 1 (was -1)")]
    [InlineData("OverShareStatusCode", "200", "Manaloc:Dispatchers:cpu:OverShareStatusCode must be an error status")]
    [InlineData("DrainTimeout", "-00:00:01", "Manaloc:Dispatchers:cpu:DrainTimeout must not be negative")]
    public async Task A_bad_dispatcher_value_fails_the_start_naming_the_key(string key, string value, string message)
    {
        var e = await StartFails(s => s.AddDedicatedDispatcher("cpu"), new() { [$"Manaloc:Dispatchers:cpu:{key}"] = value });
        var validation = Assert.IsType<OptionsValidationException>(e);
        Assert.Contains(message, validation.Message);
    }

    [Fact]
    public async Task A_value_that_does_not_convert_fails_the_start_naming_the_key()
    {
        var e = await StartFails(s => s.AddDedicatedDispatcher("cpu"), new() { ["Manaloc:Dispatchers:cpu:ThreadCount"] = "many" });
        Assert.Contains("Manaloc:Dispatchers:cpu:ThreadCount", e.ToString());
    }

    [Fact]
    public async Task A_bad_object_pool_value_fails_the_start_naming_the_key()
    {
        var e = await StartFails(s => s.AddManalocObjectPools(), new() { ["Manaloc:ObjectPools:LocalCapacity"] = "0" });
        Assert.Contains("Manaloc:ObjectPools:LocalCapacity must be between 1 and 1048576 (was 0)", e.Message);
    }

    [Fact]
    public async Task Configured_values_reach_the_dispatcher_and_code_overrides_configuration()
    {
        await using var host = await TestHost.StartAsync(s => s.AddDedicatedDispatcher("cpu", o => o.Capacity = 77),
            configuration: new Dictionary<string, string?> { ["Manaloc:Dispatchers:cpu:ThreadCount"] = "3", ["Manaloc:Dispatchers:cpu:Capacity"] = "5" });
        var dispatcher = host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu").Dispatcher;
        Assert.Equal(3, dispatcher.ThreadCount);
        Assert.Equal(77, dispatcher.Capacity);
    }

    [Fact]
    public async Task Each_named_dispatcher_reads_its_own_section()
    {
        await using var host = await TestHost.StartAsync(s => s.AddDedicatedDispatcher("a").AddDedicatedDispatcher("b"),
            configuration: new Dictionary<string, string?> { ["Manaloc:Dispatchers:a:ThreadCount"] = "1", ["Manaloc:Dispatchers:b:ThreadCount"] = "2" });
        Assert.Equal(1, host.Services.GetRequiredKeyedService<HostedDispatcher>("a").Dispatcher.ThreadCount);
        Assert.Equal(2, host.Services.GetRequiredKeyedService<HostedDispatcher>("b").Dispatcher.ThreadCount);
    }
}
