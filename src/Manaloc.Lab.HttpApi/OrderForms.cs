using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>
/// An order as the client sends it, read into pooled objects (the Manaloc build): the same JSON as <see cref="Order"/>,
/// in mutable classes that System.Text.Json fills through setters, so reading one builds no constructor arguments
/// (no <c>ArgumentState</c>, argument array or boxed numbers) and the form, its lines and its list come back from
/// <see cref="ObjectPool{T}"/> instead of being allocated per request.
/// </summary>
/// <remarks>Reset on return (<see cref="IResettable"/>): a form grown by a huge order is not kept.</remarks>
public sealed class OrderForm : IResettable
{
    public long Id { get; set; }

    public string? Customer { get; set; }

    private readonly List<OrderLineForm?> _lines = [];

    /// <summary>Filled in place: the form's own list, kept between requests; null only when the JSON says <c>"lines": null</c>.</summary>
    [JsonObjectCreationHandling(JsonObjectCreationHandling.Populate)]
    public List<OrderLineForm?>? Lines { get; set; }

    public OrderForm() => Lines = _lines;

    /// <inheritdoc/>
    public bool TryReset()
    {
        bool keep = _lines.Capacity <= 1024;
        Id = 0;
        Customer = null;
        _lines.Clear();
        Lines = _lines;
        return keep;
    }
}

/// <summary>One line of an <see cref="OrderForm"/>.</summary>
public sealed class OrderLineForm : IResettable
{
    public string? Sku { get; set; }

    public int Quantity { get; set; }

    public decimal UnitPrice { get; set; }

    /// <inheritdoc/>
    public bool TryReset()
    {
        Sku = null;
        Quantity = 0;
        UnitPrice = 0;
        return true;
    }
}

/// <summary>
/// Reads orders into pooled <see cref="OrderForm"/>s: System.Text.Json's source-generated contract for the form, with
/// its objects created by the pools (a contract modifier sets <see cref="JsonTypeInfo.CreateObject"/>), and the same
/// serializer options as the records (web defaults), so both builds accept and refuse the same JSON.
/// </summary>
/// <remarks>Thread safety: the pools and the contract are safe from any thread; a form belongs to one request until <see cref="Return"/>.</remarks>
public sealed class OrderForms
{
    private readonly ObjectPool<OrderForm> _forms;
    private readonly ObjectPool<OrderLineForm> _lines;

    public OrderForms(ObjectPool<OrderForm> forms, ObjectPool<OrderLineForm> lines)
    {
        _forms = forms;
        _lines = lines;
        var options = new JsonSerializerOptions(ApiJson.Default.Options)
        {
            TypeInfoResolver = ApiJson.Default.WithAddedModifier(contract =>
            {
                if (contract.Type == typeof(OrderForm)) contract.CreateObject = () => _forms.Get();
                else if (contract.Type == typeof(OrderLineForm)) contract.CreateObject = () => _lines.Get();
            }),
        };
        Contract = (JsonTypeInfo<OrderForm>)options.GetTypeInfo(typeof(OrderForm));
    }

    /// <summary>The form's contract, creating its objects from the pools.</summary>
    public JsonTypeInfo<OrderForm> Contract { get; }

    /// <summary>Gives the form and its lines back to their pools.</summary>
    public void Return(OrderForm form)
    {
        foreach (var line in form.Lines ?? [])
        {
            if (line is not null) _lines.Return(line);
        }
        _forms.Return(form);
    }
}
