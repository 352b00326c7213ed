using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Manaloc.Configuration;

/// <summary>Binds options from the host's configuration (when there is one) and validates them with messages naming the keys.</summary>
/// <remarks>
/// One source compiled into each package that reads <c>Manaloc:</c> (Manaloc.AspNetCore, Manaloc.Caching), so each has its own
/// copy of these types. What must be seen across packages goes through the container under keys and types of the framework,
/// never a type of this file: every package's sections are registered under <see cref="SectionsKey"/> as
/// <c>Tuple&lt;string, Type&gt;</c>, and only the first registration of a host adds the unknown-keys check, which then reads the
/// sections of every package, so a host using two packages neither reports one package's keys as unknown to the other nor
/// reports a key twice.
/// </remarks>
internal static class ManalocOptionsBinding
{
    /// <summary>The service key of every registered section (a <c>Tuple&lt;string, Type&gt;</c>: the section's path, the options type bound from it).</summary>
    private const string SectionsKey = "Manaloc:RegisteredSections";

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
                // Nor is a section with a value that does not convert (the binder would throw its own exception here, out of
                // the options' construction): SectionValidator fails the start naming the key, the value and what it takes.
                if (!ManalocConfigurationKeys.InSection(configuration, section, typeof(TOptions)).None) return;
                configuration.GetSection(section).Bind(options);
            });
        if (configure is not null) builder.Configure(configure);
        services.AddSingleton<IValidateOptions<TOptions>>(provider => new SectionValidator<TOptions>(name, section, problems, provider.GetService<IConfiguration>()));
        // The first section of the host, whichever package registers it, brings the one check of unknown keys.
        bool first = !services.Any(d => d.IsKeyedService && Equals(d.ServiceKey, SectionsKey));
        services.AddKeyedSingleton(SectionsKey, Tuple.Create(section, typeof(TOptions)));
        if (first)
        {
            services.AddSingleton<IValidateOptions<UnknownKeys>>(static provider => new UnknownKeysValidator(
                provider.GetService<IConfiguration>(),
                provider.GetKeyedServices<Tuple<string, Type>>(SectionsKey).Select(RegisteredSection.From).ToArray()));
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
    private sealed record RegisteredSection(string Path, [property: DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] Type Options)
    {
        /// <summary>A section as the container holds it (registered by this package's copy of this file or another's).</summary>
        [UnconditionalSuppressMessage("Trimming", "IL2067", Justification = "Every registered options type is AddManalocOptions' TOptions, annotated for the configuration binder, which keeps its public properties.")]
        public static RegisteredSection From(Tuple<string, Type> registered) => new(registered.Item1, registered.Item2);
    }

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
                found.AddRange(ManalocConfigurationKeys.InSection(configuration, section.Path, section.Options).UnknownKeys);
            return found.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(found);
        }
    }

    /// <summary>
    /// Validates the options named <paramref name="name"/>; each failure names its configuration key. A section with an
    /// unknown key or a value that does not convert was not bound, so its values are the defaults, not the user's: the
    /// start fails on the unknown key (<see cref="UnknownKeysValidator"/>) and on each value that does not convert (here),
    /// not also on a default the user did set (a required budget reported as 0).
    /// </summary>
    private sealed class SectionValidator<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] TOptions>(
        string name, string section, Func<TOptions, string, List<string>> problems, IConfiguration? configuration) : IValidateOptions<TOptions>
        where TOptions : class
    {
        public ValidateOptionsResult Validate(string? optionsName, TOptions options)
        {
            if ((optionsName ?? Options.DefaultName) != name) return ValidateOptionsResult.Skip;
            if (configuration is not null)
            {
                var inSection = ManalocConfigurationKeys.InSection(configuration, section, typeof(TOptions));
                if (inSection.Unconvertible.Count > 0) return ValidateOptionsResult.Fail(inSection.Unconvertible);
                if (inSection.UnknownKeys.Count > 0) return ValidateOptionsResult.Skip;
            }
            var found = problems(options, section);
            return found.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(found);
        }
    }
}
