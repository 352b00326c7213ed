// Stand-ins for the ASP.NET Core types the rules know by name (the corpus does not reference ASP.NET Core): a result that
// is written after the handler returns, and the route builder whose handlers concurrent requests run at once.
namespace Microsoft.AspNetCore.Http
{
    public interface IResult { Task ExecuteAsync(object httpContext); }

    public static class Results
    {
        public static IResult Bytes(ReadOnlyMemory<byte> contents) => new BytesResult(contents);
        public static IResult Text(string text) => new BytesResult(System.Text.Encoding.UTF8.GetBytes(text));

        private sealed class BytesResult(ReadOnlyMemory<byte> contents) : IResult
        {
            public Task ExecuteAsync(object httpContext) => Task.FromResult(contents.Length);
        }
    }
}

namespace Microsoft.AspNetCore.Routing
{
    public interface IEndpointRouteBuilder { }
}

namespace Microsoft.AspNetCore.Builder
{
    using Microsoft.AspNetCore.Routing;

    public static class EndpointRouteBuilderExtensions
    {
        public static object MapGet(this IEndpointRouteBuilder endpoints, string pattern, Delegate handler) => handler;
    }
}
