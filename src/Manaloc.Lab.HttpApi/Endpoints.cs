using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>
/// What both builds' endpoints share, so that the two differ only where Manaloc is wired in: plain request delegates over
/// what they need, taken from the container once (no per-request parameter binding or service scope), the order read from
/// the request's pipe and deserialized in place, the same status codes. The defaults build writes its answer through a
/// buffer writer made per request; the Manaloc build through a pooled one.
/// </summary>
public static class Endpoints
{
    /// <summary>The largest order body read (bytes); a larger one is answered 413.</summary>
    public const int MaxOrderBytes = 64 * 1024;

    /// <summary>The primes endpoint's argument, or null (answered 400) when it is not a number from 1 to 1,000,000.</summary>
    public static int? PrimeLimit(HttpContext context)
        => int.TryParse(context.Request.RouteValues["n"] as string, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n is >= 1 and <= 1_000_000 ? n : null;

    /// <summary>
    /// Reads the order from the request's pipe (its segments come from Kestrel's memory pool) and deserializes it in
    /// place with <paramref name="contract"/>. Null after the response's status is set: 413 for a body over
    /// <see cref="MaxOrderBytes"/>, 400 for one that is not an order.
    /// </summary>
    public static async ValueTask<T?> ReadOrderAsync<T>(HttpContext context, JsonTypeInfo<T> contract) where T : class
    {
        var body = context.Request.BodyReader;
        ReadResult read;
        while (true)
        {
            read = await body.ReadAsync(context.RequestAborted);
            if (read.IsCompleted || read.Buffer.Length > MaxOrderBytes) break;
            body.AdvanceTo(read.Buffer.Start, read.Buffer.End); // nothing consumed yet: wait for the rest
        }
        bool tooLarge = read.Buffer.Length > MaxOrderBytes;
        T? order = tooLarge ? null : Parse(read.Buffer, contract);
        body.AdvanceTo(read.Buffer.End);
        if (order is null) context.Response.StatusCode = tooLarge ? StatusCodes.Status413PayloadTooLarge : StatusCodes.Status400BadRequest;
        return order;
    }

    /// <summary>
    /// <see cref="ReadOrderAsync"/> into the <see cref="Order"/> record, then the checks (<see cref="Refuses(Order, ObjectPool{SkuSet})"/>):
    /// null after the response's status is set (413 or 400).
    /// </summary>
    public static async ValueTask<Order?> ReadValidOrderAsync(HttpContext context, ObjectPool<SkuSet> sets)
    {
        if (await ReadOrderAsync(context, ApiJson.Default.Order) is not { } order) return null;
        if (!Refuses(order, sets)) return order;
        context.Response.StatusCode = StatusCodes.Status400BadRequest;
        return null;
    }

    /// <summary>
    /// <see cref="ReadOrderAsync"/> into a pooled <see cref="OrderForm"/>, then the same checks as the record's: null after the
    /// response's status is set (413 or 400, the form given back); otherwise the caller gives the form back when done.
    /// </summary>
    public static async ValueTask<OrderForm?> ReadValidOrderAsync(HttpContext context, ObjectPool<SkuSet> sets, OrderForms forms)
    {
        if (await ReadOrderAsync(context, forms.Contract) is not { } order) return null;
        if (!Refuses(order, sets)) return order;
        forms.Return(order);
        context.Response.StatusCode = StatusCodes.Status400BadRequest;
        return null;
    }

    /// <summary>
    /// True when the order is refused (400): it has no lines (missing, null or empty), a null line, or a SKU twice
    /// (found with a pooled <see cref="SkuSet"/> from Microsoft.Extensions.ObjectPool's provider or Manaloc's, as the build registered it).
    /// </summary>
    public static bool Refuses(Order order, ObjectPool<SkuSet> sets)
    {
        if (order.Lines is not { Length: > 0 } lines || Array.IndexOf(lines, null) >= 0) return true;
        var set = sets.Get();
        try
        {
            foreach (var line in lines)
            {
                if (!set.Add(line.Sku)) return true;
            }
            return false;
        }
        finally
        {
            sets.Return(set);
        }
    }

    /// <summary>The same checks as <see cref="Refuses(Order, ObjectPool{SkuSet})"/>, on a form.</summary>
    public static bool Refuses(OrderForm order, ObjectPool<SkuSet> sets)
    {
        if (order.Lines is not { Count: > 0 } lines || lines.Contains(null)) return true;
        var set = sets.Get();
        try
        {
            foreach (var line in lines)
            {
                if (!set.Add(line!.Sku)) return true;
            }
            return false;
        }
        finally
        {
            sets.Return(set);
        }
    }

    private static T? Parse<T>(in ReadOnlySequence<byte> json, JsonTypeInfo<T> contract) where T : class
    {
        try
        {
            var reader = new Utf8JsonReader(json);
            return JsonSerializer.Deserialize(ref reader, contract);
        }
        catch (JsonException)
        {
            return null;
        }
    }

    /// <summary>Sends <paramref name="json"/> as the response's body, with its length and content type (Kestrel sends it when the request ends).</summary>
    public static void Respond(HttpContext context, in ReadOnlySequence<byte> json)
    {
        context.Response.ContentType = "application/json; charset=utf-8";
        context.Response.ContentLength = json.Length;
        foreach (var segment in json) context.Response.BodyWriter.Write(segment.Span);
    }
}
