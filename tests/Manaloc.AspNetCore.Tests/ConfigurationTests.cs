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

    [Fact]
    public void Every_registration_refuses_null_services_naming_the_argument()
    {
        IServiceCollection services = null!;
        Assert.Equal("services", Assert.Throws<ArgumentNullException>(() => services.AddManalocObjectPools()).ParamName);
        Assert.Equal("services", Assert.Throws<ArgumentNullException>(() => services.AddManalocKestrelMemoryPool()).ParamName);
        Assert.Equal("services", Assert.Throws<ArgumentNullException>(() => services.AddManalocIdleRelease()).ParamName);
        Assert.Equal("services", Assert.Throws<ArgumentNullException>(() => services.AddDedicatedDispatcher("cpu")).ParamName);
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

    private const string WholeNumber = "a whole number in the range of Int32", TimeSpanValue = "a time span ([d.]hh:mm:ss[.fffffff], such as 00:00:30)";

    /// <summary>A value of each kind the sections take (a number, a nullable number, a time span, a boolean) that does not convert.</summary>
    public static readonly TheoryData<string, string, string> Unconvertible = new()
    {
        { "Manaloc:Dispatchers:cpu:ThreadCount", "many", WholeNumber },
        { "Manaloc:Dispatchers:cpu:DrainTimeout", "10s", TimeSpanValue },
        { "Manaloc:MemoryPool:Pinned", "yes", "true or false" },
        { "Manaloc:ObjectPools:MaximumRetained", "none", WholeNumber },
        { "Manaloc:IdleRelease:QuietAfter", "30 seconds", TimeSpanValue },
    };

    [Theory]
    [MemberData(nameof(Unconvertible))]
    public async Task A_value_that_does_not_convert_fails_the_start_naming_the_key_the_value_and_what_it_takes(string key, string value, string expected)
    {
        // The Kestrel pool's options are read while the host is built, the others' when it starts: either fails.
        var e = await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await using var app = TestHost.Build(
                s => s.AddDedicatedDispatcher("cpu").AddManalocKestrelMemoryPool().AddManalocObjectPools().AddManalocIdleRelease(),
                configuration: new Dictionary<string, string?> { [key] = value });
            await app.StartAsync();
        });
        var validation = Assert.IsType<OptionsValidationException>(e); // ours, not the configuration binder's exception
        Assert.Equal($"{key} is '{value}', which is not {expected}.", validation.Message);
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

    [Theory]
    [InlineData("2", 1)]
    [InlineData("3", 2)]
    [InlineData("8", 7)]
    [InlineData("1", 1)]
    public async Task The_default_share_leaves_other_clients_a_worker_wherever_there_are_two(string threads, int share)
    {
        await using var host = await TestHost.StartAsync(s => s.AddDedicatedDispatcher("cpu"),
            configuration: new Dictionary<string, string?> { ["Manaloc:Dispatchers:cpu:ThreadCount"] = threads });
        var options = host.Services.GetRequiredService<IOptionsMonitor<DedicatedDispatcherOptions>>().Get("cpu");
        Assert.Equal(share, options.ClientShare);
        Assert.Equal(int.Parse(threads, System.Globalization.CultureInfo.InvariantCulture), host.Services.GetRequiredKeyedService<HostedDispatcher>("cpu").Dispatcher.ThreadCount);
    }

    [Fact]
    public void The_default_share_follows_the_thread_count_set_in_code_and_a_set_share_stays()
    {
        var options = new DedicatedDispatcherOptions { ThreadCount = 6 };
        Assert.Equal(5, options.ClientShare);
        options.ClientShare = 6;
        options.ThreadCount = 2;
        Assert.Equal(6, options.ClientShare);
        Assert.True(new DedicatedDispatcherOptions().ClientShare < Math.Max(2, Environment.ProcessorCount));
    }

    public static TheoryData<string, string> UnknownKeys => new()
    {
        { "Manaloc:MemoryPool:BlockSzie", "Manaloc:MemoryPool has BlockSize, Pinned, Diagnostics" },
        { "Manaloc:Kestrel:BlockSzie", "Manaloc has " },
        { "Manaloc:Dispatchers:cpu:ThreadCont", "Manaloc:Dispatchers:cpu has ThreadCount, Capacity, ClientShare" },
        { "Manaloc:Dispatchers:cpuu:ThreadCount", "Manaloc:Dispatchers has cpu" },
        { "Manaloc:ObjectPools:MaxRetained", "Manaloc:ObjectPools has MaximumRetained" },
        { "Manaloc:IdleRelease:QuietAftr", "Manaloc:IdleRelease has QuietAfter, CollectGarbage" },
        { "Manaloc:MemoryPool:BlockSize:Extra", "Manaloc:MemoryPool:BlockSize is a value" },
        { "Manaloc:Dispatchers:cpu:ClientKey", "ClientKey is set in code only" },
    };

    [Theory]
    [MemberData(nameof(UnknownKeys))]
    public async Task An_unknown_key_under_Manaloc_fails_the_start_naming_the_key(string key, string hint)
    {
        var e = await StartFails(s => s.AddManalocKestrelMemoryPool().AddManalocObjectPools().AddManalocIdleRelease().AddDedicatedDispatcher("cpu"),
            new() { [key] = "1" });
        var validation = Assert.IsType<OptionsValidationException>(e);
        Assert.Contains($"{key} is not a setting Manaloc reads", validation.Message);
        Assert.Contains(hint, validation.Message);
    }

    [Fact]
    public async Task A_key_of_a_registration_the_host_does_not_make_fails_the_start_saying_which_registration_reads_it()
    {
        var e = await StartFails(s => s.AddDedicatedDispatcher("cpu"), new() { ["Manaloc:IdleRelease:QuietAfter"] = "00:00:05" });
        Assert.Contains("Manaloc:IdleRelease:QuietAfter is not a setting Manaloc reads", e.Message);
        Assert.Contains("AddManalocIdleRelease", e.Message);
    }

    [Fact]
    public void The_shared_hint_table_names_this_package_s_sections_as_its_options_do()
    {
        // The table is shared with Manaloc.Caching by name (Manaloc.Configuration is one source compiled into both).
        var sections = global::Manaloc.Configuration.ManalocConfigurationKeys.PackageSections.Select(s => s.Section).ToArray();
        Assert.Contains(global::Manaloc.AspNetCore.Kestrel.ManalocMemoryPoolOptions.SectionName, sections);
        Assert.Contains(global::Manaloc.AspNetCore.ObjectPools.ManalocObjectPoolOptions.SectionName, sections);
        Assert.Contains(global::Manaloc.AspNetCore.IdleRelease.IdleReleaseOptions.SectionName, sections);
        Assert.Equal(DedicatedDispatcherOptions.SectionPrefix, global::Manaloc.Configuration.ManalocConfigurationKeys.DispatchersPrefix);
    }

    [Fact]
    public async Task Every_unknown_key_is_named_and_known_keys_match_in_any_case()
    {
        var e = await StartFails(s => s.AddManalocKestrelMemoryPool(), new()
        {
            ["manaloc:memorypool:blocksize"] = "8192",
            ["Manaloc:MemoryPool:Pined"] = "false",
            ["Manaloc:Kestrel:BlockSzie"] = "8192",
        });
        Assert.Contains("Manaloc:MemoryPool:Pined is not a setting Manaloc reads", e.Message);
        Assert.Contains("Manaloc:Kestrel:BlockSzie is not a setting Manaloc reads", e.Message);
        Assert.DoesNotContain("blocksize is not", e.Message, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task Known_keys_of_every_registration_and_empty_sections_start()
    {
        await using var host = await TestHost.StartAsync(
            s => s.AddManalocKestrelMemoryPool().AddManalocObjectPools().AddManalocIdleRelease().AddDedicatedDispatcher("cpu").AddDedicatedDispatcher("io"),
            configuration: new Dictionary<string, string?>
            {
                ["MANALOC:MEMORYPOOL:BLOCKSIZE"] = "8192",
                ["Manaloc:ObjectPools:MaximumRetained"] = "100",
                ["Manaloc:IdleRelease:CollectGarbage"] = "false",
                ["Manaloc:Dispatchers:cpu:ClientLine"] = "3",
                ["Manaloc:Dispatchers:io"] = null,
                ["Other:Kestrel:BlockSzie"] = "1",
            });
        Assert.Equal(8192, host.Services.GetRequiredService<IOptions<Manaloc.AspNetCore.Kestrel.ManalocMemoryPoolOptions>>().Value.BlockSize);
    }
}
