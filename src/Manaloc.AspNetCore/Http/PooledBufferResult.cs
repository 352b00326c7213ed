using Manaloc.Buffers;
using Microsoft.AspNetCore.Http;

namespace Manaloc.AspNetCore.Http;

/// <summary>
/// An <see cref="IResult"/> whose body is what a <see cref="PooledBufferWriter"/> holds. The result owns the writer: it
/// writes the body into the response's <see cref="HttpResponse.BodyWriter"/> and disposes the writer once the body is
/// written and flushed, or when writing fails (an exception, a client that went away). Made by <see cref="ManalocResults"/>.
/// </summary>
/// <remarks>
/// <para>Why: ASP.NET Core writes a result after the handler returned, and after whatever awaits in between (endpoint
/// filters, <c>OnStarting</c> callbacks), so a writer the handler disposes (<c>using</c>) has given its arrays back
/// before <c>Results.Bytes(writer.WrittenSequence.First)</c> reads them: another request's bytes go out. This result
/// disposes the writer only after the response's pipe holds its copy of the body.</para>
/// <para>The response gets <see cref="StatusCode"/>, <see cref="ContentType"/> and a <c>Content-Length</c> of the bytes
/// written; the body is copied segment by segment into the pipe (the one copy every response makes), each segment flushed,
/// so the pipe's back-pressure holds. A result that is never executed (a filter replaced it, the request failed first)
/// leaves its writer's arrays to the garbage collector: they are not returned, and no one else reads them.</para>
/// <para>Thread safety: one execution. A second <see cref="ExecuteAsync"/> (from any thread, at any time) throws
/// <see cref="InvalidOperationException"/>: the first took the writer (an atomic exchange) and disposes it.</para>
/// </remarks>
public sealed class PooledBufferResult : IResult, IStatusCodeHttpResult, IContentTypeHttpResult
{
    private PooledBufferWriter? _writer; // taken (exchanged for null) by the one execution

    internal PooledBufferResult(PooledBufferWriter writer, string contentType, int statusCode)
    {
        _writer = writer;
        ContentType = contentType;
        StatusCode = statusCode;
    }

    /// <summary>The response's status code.</summary>
    public int StatusCode { get; }

    /// <summary>The response's <c>Content-Type</c>.</summary>
    public string ContentType { get; }

    int? IStatusCodeHttpResult.StatusCode => StatusCode;

    string? IContentTypeHttpResult.ContentType => ContentType;

    /// <summary>Writes the status code, content type and length, then the body, and disposes the writer (on every path).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="httpContext"/> is null.</exception>
    /// <exception cref="InvalidOperationException">The result was executed already, or the writer was disposed before the
    /// response was written (the handler must not dispose a writer it hands to the result).</exception>
    /// <exception cref="OperationCanceledException">The request was aborted while the body was being flushed.</exception>
    public Task ExecuteAsync(HttpContext httpContext)
    {
        ArgumentNullException.ThrowIfNull(httpContext);
        var writer = Interlocked.Exchange(ref _writer, null); // the one execution takes the writer; a second finds null
        if (writer is null)
            throw new InvalidOperationException("This PooledBufferResult was executed already: its writer went back to the pool after the first response. Create one result per response.");
        return WriteAsync(httpContext, writer);
    }

    private async Task WriteAsync(HttpContext context, PooledBufferWriter writer)
    {
        try
        {
            long length;
            try
            {
                length = writer.WrittenCount;
            }
            catch (ObjectDisposedException e)
            {
                throw new InvalidOperationException(
                    "The PooledBufferWriter given to ManalocResults.Bytes was disposed before the response was written. The result owns the writer " +
                    "and disposes it once the body is sent: do not dispose it in the handler (no 'using').", e);
            }
            var response = context.Response;
            response.StatusCode = StatusCode;
            response.ContentType = ContentType;
            response.ContentLength = length;
            if (length != 0) await writer.CopyToAsync(response.BodyWriter, context.RequestAborted).ConfigureAwait(false);
        }
        finally
        {
            // Every segment was copied into the pipe's own memory before its flush completed (or the write failed and the pipe
            // holds nothing of ours), so nothing reads the writer's arrays after this.
            writer.Dispose();
        }
    }
}
