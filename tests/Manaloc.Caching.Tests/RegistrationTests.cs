using Manaloc.AspNetCore;
using Manaloc.Collections;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Caching.Tests;

/// <summary>
/// <c>AddManalocDistributedCache</c>: what it registers, options bound from <c>Manaloc:Cache</c> and validated on start
/// (a bad value or an unknown key stops the start naming the key), the container's clock, and disposal with the container.
/// </summary>
public sealed class RegistrationTests
{
    private static readonly Dictionary<string, string?> Budget = new() { ["Manaloc:Cache:MaxBytes"] = "1048576" };

    [Fact]
    public async Task It_makes_one_native_cache_the_distributed_cache()
    {
        using var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(), Budget);
        var distributed = host.Services.GetRequiredService<IDistributedCache>();
        var adapter = Assert.IsType<ManalocDistributedCache>(distributed);
        Assert.Same(adapter, host.Services.GetRequiredService<ManalocDistributedCache>());
        Assert.Same(adapter.Cache, host.Services.GetRequiredService<NativeCache>()); // the NativeCache service, when the application has none
        Assert.IsAssignableFrom<IBufferDistributedCache>(distributed);
        distributed.Set("k", [7], new DistributedCacheEntryOptions());
        Assert.Equal(1, adapter.Cache.Count);
    }

    [Fact]
    public async Task It_replaces_a_distributed_cache_registered_before_it()
    {
        using var host = await TestHost.StartAsync(s => s.AddDistributedMemoryCache().AddManalocDistributedCache(), Budget);
        Assert.IsType<ManalocDistributedCache>(host.Services.GetRequiredService<IDistributedCache>());
        Assert.Single(host.Services.GetServices<IDistributedCache>());
    }

    [Fact]
    public async Task A_distributed_memory_cache_added_after_it_adds_nothing_and_the_native_cache_stays()
    {
        // AddDistributedMemoryCache registers with TryAdd: after this package's registration it finds an IDistributedCache.
        using var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache().AddDistributedMemoryCache(), Budget);
        Assert.IsType<ManalocDistributedCache>(host.Services.GetRequiredService<IDistributedCache>());
        Assert.Single(host.Services.GetServices<IDistributedCache>());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_native_cache_the_application_registers_stays_its_own_and_the_options_configure_the_adapter_s(bool before)
    {
        using var own = new NativeCache(new NativeCacheOptions { MaxBytes = 1 << 20, Name = "sessions" });
        void Register(IServiceCollection s)
        {
            if (before) s.AddSingleton(own);
            s.AddManalocDistributedCache(o => o.Name = "hybrid");
            if (!before) s.AddSingleton(own);
        }
        using var host = await TestHost.StartAsync(Register, new() { ["Manaloc:Cache:MaxBytes"] = "2097152" });
        var adapter = Assert.IsType<ManalocDistributedCache>(host.Services.GetRequiredService<IDistributedCache>());
        Assert.NotSame(own, adapter.Cache);
        Assert.Equal("hybrid", adapter.Cache.Name);
        Assert.Equal(2097152, adapter.Cache.GetStatistics().MaxBytes);
        Assert.Same(own, host.Services.GetRequiredService<NativeCache>());
        adapter.Set("k", [1], new DistributedCacheEntryOptions());
        Assert.Equal(0, own.Count);
        Assert.Equal(1, adapter.Cache.Count);
    }

    [Fact]
    public void A_distributed_cache_adapter_registered_before_is_a_conflict_named_at_the_call()
    {
        using var own = new NativeCache(new NativeCacheOptions { MaxBytes = 1 << 20 });
        var services = new ServiceCollection().AddSingleton(new ManalocDistributedCache(own));
        var e = Assert.Throws<InvalidOperationException>(() => services.AddManalocDistributedCache(o => o.MaxBytes = 2 << 20));
        Assert.Contains("A ManalocDistributedCache is registered already (as an instance)", e.Message);
        Assert.Contains("do not call AddManalocDistributedCache", e.Message);
        Assert.Single(services); // nothing half-registered
    }

    [Fact]
    public async Task A_refused_value_is_counted_and_leaves_no_value_under_its_key()
    {
        using var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(o => o.MaxEntryBytes = 4096), Budget);
        var cache = host.Services.GetRequiredService<IDistributedCache>();
        cache.Set("small", new byte[100], new DistributedCacheEntryOptions());
        cache.Set("large", new byte[100], new DistributedCacheEntryOptions());
        cache.Set("large", new byte[5000], new DistributedCacheEntryOptions());
        await cache.SetAsync("large\uD800", new byte[10_000], new DistributedCacheEntryOptions());
        Assert.Null(cache.Get("large")); // the older value under the key is gone: no stale answer
        Assert.Null(cache.Get("large\uD800"));
        Assert.Equal(100, cache.Get("small")!.Length);
        Assert.Equal(2, host.Services.GetRequiredService<ManalocDistributedCache>().Cache.GetStatistics().Refusals);
    }

    [Fact]
    public async Task Configured_values_reach_the_cache_and_code_overrides_configuration()
    {
        using var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(o => o.MaxEntryBytes = 4096),
            new() { ["Manaloc:Cache:MaxBytes"] = "2097152", ["Manaloc:Cache:MaxEntryBytes"] = "100", ["Manaloc:Cache:Name"] = "sessions" });
        var options = host.Services.GetRequiredService<IOptions<NativeCacheOptions>>().Value;
        Assert.Equal(2097152, options.MaxBytes);
        Assert.Equal(4096, options.MaxEntryBytes);
        var cache = host.Services.GetRequiredService<ManalocDistributedCache>().Cache;
        Assert.Equal("sessions", cache.Name);
        Assert.Equal(2097152, cache.GetStatistics().MaxBytes);
    }

    [Fact]
    public async Task Options_set_in_code_alone_need_no_configuration_and_a_second_call_adds_to_them()
    {
        using var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(o => o.MaxBytes = 1 << 20).AddManalocDistributedCache(o => o.Name = "second"));
        var cache = host.Services.GetRequiredService<ManalocDistributedCache>().Cache;
        Assert.Equal("second", cache.Name);
        Assert.Single(host.Services.GetServices<IDistributedCache>());
    }

    [Theory]
    [InlineData("MaxBytes", "0", "Manaloc:Cache:MaxBytes must be between 8192 and 137438953472 (was 0)")]
    [InlineData("MaxBytes", "-5", "Manaloc:Cache:MaxBytes must be between 8192 and 137438953472 (was -5)")]
    [InlineData("MaxBytes", "4096", "Manaloc:Cache:MaxBytes must be between 8192 and 137438953472 (was 4096)")]
    [InlineData("MaxBytes", "137438953473", "Manaloc:Cache:MaxBytes must be between 8192 and 137438953472 (was 137438953473)")]
    [InlineData("MaxEntryBytes", "-1", "Manaloc:Cache:MaxEntryBytes must not be negative (was -1")]
    [InlineData("MaxEntryBytes", "63", "Manaloc:Cache:MaxEntryBytes is below the smallest entry (was 63): at least 64")]
    [InlineData("MaxEntryBytes", "1048576", "Manaloc:Cache:MaxEntryBytes is too large for Manaloc:Cache:MaxBytes (was 1048576): ")]
    [InlineData("MaxEntryBytes", "2000000", "Manaloc:Cache:MaxEntryBytes is too large for Manaloc:Cache:MaxBytes (was 2000000): ")]
    public async Task A_bad_value_fails_the_start_naming_the_key(string key, string value, string message)
    {
        var configuration = new Dictionary<string, string?>(Budget) { [$"Manaloc:Cache:{key}"] = value };
        var e = await TestHost.StartFails(s => s.AddManalocDistributedCache(), configuration);
        var validation = Assert.IsType<OptionsValidationException>(e);
        Assert.Contains(message, validation.Message);
    }

    [Fact]
    public async Task No_budget_at_all_fails_the_start_saying_where_to_set_it()
    {
        var e = await TestHost.StartFails(s => s.AddManalocDistributedCache(), []);
        Assert.Contains("Manaloc:Cache:MaxBytes must be between 8192 and 137438953472 (was 0)", e.Message);
        Assert.Contains("AddManalocDistributedCache(o => o.MaxBytes = ...)", e.Message);
    }

    [Fact]
    public async Task An_entry_limit_within_the_space_for_entries_starts_and_is_the_cache_s()
    {
        using var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(),
            new() { ["Manaloc:Cache:MaxBytes"] = "1048576", ["Manaloc:Cache:MaxEntryBytes"] = "65536" });
        Assert.Equal(65536, host.Services.GetRequiredService<ManalocDistributedCache>().Cache.MaxEntryBytes);
    }

    [Fact]
    public async Task Checking_an_entry_limit_makes_no_cache_of_the_budget()
    {
        // The check computes the space for entries from the layout: a 128 GiB budget's index and frequency sketch (some
        // 6 GiB, committed by a cache's constructor) are not made to check a setting. Linux only: the peak resident set
        // (VmHWM) is reset by writing 5 to /proc/self/clear_refs.
        if (!OperatingSystem.IsLinux()) return;
        File.WriteAllText("/proc/self/clear_refs", "5");
        long before = PeakResidentBytes();
        var configuration = new Dictionary<string, string?>
        {
            ["Manaloc:Cache:MaxBytes"] = NativeCache.MaximumMaxBytes.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["Manaloc:Cache:MaxEntryBytes"] = "1153434",
        };
        using (var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(), configuration)) { }
        Assert.InRange(PeakResidentBytes() - before, long.MinValue, 1L << 30);
        var e = await TestHost.StartFails(s => s.AddManalocDistributedCache(), new(configuration) { ["Manaloc:Cache:MaxEntryBytes"] = "137438953472" });
        Assert.Contains($"Manaloc:Cache:MaxEntryBytes is too large for Manaloc:Cache:MaxBytes (was 137438953472): at most {NativeCache.SpaceForEntries(NativeCache.MaximumMaxBytes)}", e.Message);
    }

    private static long PeakResidentBytes()
    {
        string line = File.ReadLines("/proc/self/status").First(l => l.StartsWith("VmHWM:", StringComparison.Ordinal));
        return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), System.Globalization.CultureInfo.InvariantCulture) * 1024;
    }

    [Theory]
    [InlineData("MaxBytes", "lots")]
    [InlineData("MaxBytes", "64MB")]
    [InlineData("MaxBytes", "1e9")]
    [InlineData("MaxBytes", "99999999999999999999")]
    [InlineData("MaxEntryBytes", "4 KiB")]
    public async Task A_value_that_does_not_convert_fails_the_start_naming_the_key_and_the_value(string key, string value)
    {
        var configuration = new Dictionary<string, string?>(Budget) { [$"Manaloc:Cache:{key}"] = value };
        var e = await TestHost.StartFails(s => s.AddManalocDistributedCache(), configuration);
        var validation = Assert.IsType<OptionsValidationException>(e); // ours, not the configuration binder's exception
        Assert.Equal($"Manaloc:Cache:{key} is '{value}', which is not a whole number in the range of Int64.", validation.Message);
    }

    [Fact]
    public async Task A_value_that_does_not_convert_beside_an_unknown_key_names_both_and_nothing_else()
    {
        var e = await TestHost.StartFails(s => s.AddManalocDistributedCache(),
            new() { ["Manaloc:Cache:MaxBytes"] = "lots", ["Manaloc:Cache:MaxEntrys"] = "1" });
        string message = e is AggregateException all ? string.Join(" ", all.InnerExceptions.Select(i => i.Message)) : e.Message;
        Assert.Contains("Manaloc:Cache:MaxBytes is 'lots'", message);
        Assert.Contains("Manaloc:Cache:MaxEntrys is not a setting Manaloc reads", message);
        Assert.DoesNotContain("(was 0)", message); // the section was not bound: its defaults are not reported
    }

    [Fact]
    public async Task Values_with_spaces_around_or_in_hex_convert_as_the_binder_reads_them()
    {
        using var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(),
            new() { ["Manaloc:Cache:MaxBytes"] = " 2097152 ", ["Manaloc:Cache:MaxEntryBytes"] = "0x1000" });
        var options = host.Services.GetRequiredService<IOptions<NativeCacheOptions>>().Value;
        Assert.Equal(2097152, options.MaxBytes);
        Assert.Equal(4096, options.MaxEntryBytes);
    }

    [Theory]
    [InlineData("Manaloc:Cache:MaxByte", "Manaloc:Cache has MaxBytes, MaxEntryBytes, Name")]
    [InlineData("Manaloc:Cache:TimeProvider", "TimeProvider is set in code only")]
    [InlineData("Manaloc:Cache:MaxBytes:Inner", "Manaloc:Cache:MaxBytes is a value, not a section")]
    [InlineData("Manaloc:Caches:MaxBytes", "Manaloc has Cache")]
    public async Task An_unknown_key_fails_the_start_naming_the_key(string key, string hint)
    {
        var configuration = new Dictionary<string, string?>(Budget) { [key] = "1" };
        var e = await TestHost.StartFails(s => s.AddManalocDistributedCache(), configuration);
        var validation = Assert.IsType<OptionsValidationException>(e);
        Assert.Contains($"{key} is not a setting Manaloc reads", validation.Message);
        Assert.Contains(hint, validation.Message);
    }

    [Fact]
    public async Task With_both_packages_each_one_s_sections_are_known_and_an_unknown_key_is_named_once()
    {
        var configuration = new Dictionary<string, string?>(Budget)
        {
            ["Manaloc:ObjectPools:LocalCapacity"] = "32",
            ["Manaloc:Cache:Name"] = "both",
        };
        using (var host = await TestHost.StartAsync(s => s.AddManalocObjectPools().AddManalocDistributedCache(), configuration))
            Assert.Equal("both", host.Services.GetRequiredService<ManalocDistributedCache>().Cache.Name);
        using (var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache().AddManalocObjectPools(), configuration))
            Assert.Equal("both", host.Services.GetRequiredService<ManalocDistributedCache>().Cache.Name);

        configuration["Manaloc:Cache:Nmae"] = "typo";
        var e = await TestHost.StartFails(s => s.AddManalocObjectPools().AddManalocDistributedCache(), configuration);
        string message = Assert.IsType<OptionsValidationException>(e).Message;
        string named = "Manaloc:Cache:Nmae is not a setting Manaloc reads";
        Assert.Equal(message.IndexOf(named, StringComparison.Ordinal), message.LastIndexOf(named, StringComparison.Ordinal));
        Assert.Contains(named, message);
    }

    [Fact]
    public async Task A_cache_key_in_a_host_that_does_not_register_the_cache_says_which_call_reads_it()
    {
        var e = await TestHost.StartFails(s => s.AddManalocObjectPools(), new() { ["Manaloc:Cache:MaxBytes"] = "1048576" });
        Assert.Contains("Manaloc:Cache:MaxBytes is not a setting Manaloc reads", e.Message);
        Assert.Contains("AddManalocDistributedCache()", e.Message);
    }

    [Fact]
    public void The_shared_hint_table_names_this_package_s_section()
        => Assert.Contains(Manaloc.Configuration.ManalocConfigurationKeys.PackageSections,
            s => s.Section == ManalocCachingServiceCollectionExtensions.SectionName && s.Registration.StartsWith("AddManalocDistributedCache()", StringComparison.Ordinal));

    [Fact]
    public async Task The_cache_expires_on_the_container_s_clock_unless_code_sets_another()
    {
        var clock = new FakeTimeProvider();
        using (var host = await TestHost.StartAsync(s => s.AddSingleton<TimeProvider>(clock).AddManalocDistributedCache(), Budget))
        {
            var cache = host.Services.GetRequiredService<IDistributedCache>();
            cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
            clock.Advance(TimeSpan.FromMinutes(2));
            Assert.Null(cache.Get("k"));
        }
        var own = new FakeTimeProvider();
        using (var host = await TestHost.StartAsync(s => s.AddSingleton<TimeProvider>(clock).AddManalocDistributedCache(o => o.TimeProvider = own), Budget))
            Assert.Same(own, host.Services.GetRequiredService<IOptions<NativeCacheOptions>>().Value.TimeProvider);
    }

    [Fact]
    public async Task The_container_disposes_the_cache()
    {
        NativeCache cache;
        using (var host = await TestHost.StartAsync(s => s.AddManalocDistributedCache(), Budget))
        {
            cache = host.Services.GetRequiredService<ManalocDistributedCache>().Cache;
            host.Services.GetRequiredService<IDistributedCache>().Set("k", [1], new DistributedCacheEntryOptions());
            await host.StopAsync();
        }
        Assert.Throws<ObjectDisposedException>(() => cache.Count);
    }

    [Fact]
    public void A_null_collection_is_refused()
        => Assert.Equal("services", Assert.Throws<ArgumentNullException>(() => ManalocCachingServiceCollectionExtensions.AddManalocDistributedCache(null!)).ParamName);
}
