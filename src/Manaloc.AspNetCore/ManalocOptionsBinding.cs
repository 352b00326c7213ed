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
    /// after it (code wins over configuration), and validates them when the host starts.
    /// </summary>
    public static OptionsBuilder<TOptions> AddManalocOptions<TOptions>(this IServiceCollection services, string name, string section,
        Action<TOptions>? configure, Func<TOptions, string, List<string>> problems)
        where TOptions : class
    {
        var builder = services.AddOptions<TOptions>(name)
            .Configure<IServiceProvider>((options, provider) =>
            {
                // A value that does not convert throws here, naming the key ("...at 'Manaloc:Dispatchers:cpu:ThreadCount'...").
                if (provider.GetService<IConfiguration>() is { } configuration) configuration.GetSection(section).Bind(options);
            });
        if (configure is not null) builder.Configure(configure);
        services.AddSingleton<IValidateOptions<TOptions>>(new SectionValidator<TOptions>(name, section, problems));
        return builder.ValidateOnStart();
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
