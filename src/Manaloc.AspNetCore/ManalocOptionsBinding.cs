using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Manaloc.AspNetCore;

/// <summary>Binds options from the host's configuration (when there is one) and validates them with messages naming the keys.</summary>
internal static class ManalocOptionsBinding
{
    /// <summary>
    /// Binds the options named <paramref name="name"/> from <paramref name="section"/> of the container's
    /// <see cref="IConfiguration"/> (nothing when the container has none), applies <paramref name="configure"/>
    /// after it (code wins over configuration), and validates them when the host starts. A key under <c>Manaloc:</c> that
    /// no registration of the host reads fails the start too (<see cref="ManalocConfigurationKeys"/>). Every registration
    /// calls it first, so it checks <paramref name="services"/> for them (as <c>AddOptions</c> does).
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    public static OptionsBuilder<TOptions> AddManalocOptions<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] TOptions>(
        this IServiceCollection services, string name, string section, Action<TOptions>? configure, Func<TOptions, string, List<string>> problems)
        where TOptions : class
    {
        ArgumentNullException.ThrowIfNull(services);
        var builder = services.AddOptions<TOptions>(name)
            .Configure<IServiceProvider>((options, provider) =>
            {
                if (provider.GetService<IConfiguration>() is not { } configuration) return;
                // A section with a key that binds to nothing is not bound: the start fails on it anyway (UnknownKeysValidator),
                // with every unknown key of the host in one message, and the defaults serve whatever is built before the start.
                if (ManalocConfigurationKeys.InSection(configuration, section, typeof(TOptions)).Count > 0) return;
                // A value that does not convert throws here, naming the key ("...at 'Manaloc:Dispatchers:cpu:ThreadCount'...").
                configuration.GetSection(section).Bind(options);
            });
        if (configure is not null) builder.Configure(configure);
        services.AddSingleton<IValidateOptions<TOptions>>(new SectionValidator<TOptions>(name, section, problems));
        services.AddSingleton(new RegisteredSection(section, typeof(TOptions)));
        if (!services.Any(d => d.ServiceType == typeof(IValidateOptions<UnknownKeys>)))
        {
            services.AddSingleton<IValidateOptions<UnknownKeys>>(static provider => new UnknownKeysValidator(
                provider.GetService<IConfiguration>(), provider.GetServices<RegisteredSection>().ToArray()));
            services.AddOptions<UnknownKeys>().ValidateOnStart();
        }
        return builder.ValidateOnStart();
    }

    /// <summary>
    /// Validates options handed straight to a constructor (not through the container) as the host's start would: null
    /// throws <see cref="ArgumentNullException"/>, and every problem of <paramref name="problems"/> goes into one
    /// <see cref="ArgumentException"/> naming <paramref name="paramName"/>.
    /// </summary>
    public static void ThrowIfInvalid<TOptions>(TOptions options, string section, Func<TOptions, string, List<string>> problems,
        [CallerArgumentExpression(nameof(options))] string paramName = "")
        where TOptions : class
    {
        ArgumentNullException.ThrowIfNull(options, paramName);
        var found = problems(options, section);
        if (found.Count > 0) throw new ArgumentException(string.Join(" ", found), paramName);
    }

    /// <summary>A section a registration of the host reads (a full path, e.g. <c>Manaloc:Dispatchers:cpu</c>) and the options bound from it.</summary>
    private sealed record RegisteredSection(string Path, [property: DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] Type Options);

    /// <summary>Options with nothing to set: validating them on start runs <see cref="UnknownKeysValidator"/> once per host.</summary>
    private sealed class UnknownKeys;

    /// <summary>Fails the start on every key under <c>Manaloc:</c> that no registration of the host reads, each named.</summary>
    private sealed class UnknownKeysValidator(IConfiguration? configuration, RegisteredSection[] registered) : IValidateOptions<UnknownKeys>
    {
        public ValidateOptionsResult Validate(string? optionsName, UnknownKeys options)
        {
            if (configuration is null) return ValidateOptionsResult.Skip;
            var found = ManalocConfigurationKeys.OutsideSections(configuration, registered.Select(s => s.Path).ToArray());
            foreach (var section in registered.DistinctBy(s => s.Path, StringComparer.OrdinalIgnoreCase))
                found.AddRange(ManalocConfigurationKeys.InSection(configuration, section.Path, section.Options));
            return found.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(found);
        }
    }

    /// <summary>Validates the options named <paramref name="name"/>; each failure names its configuration key.</summary>
    private sealed class SectionValidator<TOptions>(string name, string section, Func<TOptions, string, List<string>> problems) : IValidateOptions<TOptions>
        where TOptions : class
    {
        public ValidateOptionsResult Validate(string? optionsName, TOptions options)
        {
            if ((optionsName ?? Options.DefaultName) != name) return ValidateOptionsResult.Skip;
            var found = problems(options, section);
            return found.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(found);
        }
    }
}
