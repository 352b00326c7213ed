namespace HttpApi;

/// <summary>What the endpoints compute; the same in both builds.</summary>
public static class Work
{
    /// <summary>Sums an order (the JSON endpoint's work).</summary>
    public static OrderSummary Summarize(Order order)
    {
        int items = 0;
        decimal total = 0, largest = -1;
        string largestSku = "";
        foreach (var line in order.Lines)
        {
            items += line.Quantity;
            decimal amount = line.Quantity * line.UnitPrice;
            total += amount;
            if (amount > largest)
            {
                largest = amount;
                largestSku = line.Sku;
            }
        }
        return new OrderSummary(order.Id, order.Customer, order.Lines.Length, items, total, largestSku);
    }

    /// <summary><see cref="Summarize(Order)"/> for an order read into a pooled form (the lines were checked: none is null).</summary>
    public static OrderSummary Summarize(OrderForm order)
    {
        int items = 0;
        decimal total = 0, largest = -1;
        string? largestSku = "";
        foreach (var line in order.Lines!)
        {
            items += line!.Quantity;
            decimal amount = line.Quantity * line.UnitPrice;
            total += amount;
            if (amount > largest)
            {
                largest = amount;
                largestSku = line.Sku;
            }
        }
        return new OrderSummary(order.Id, order.Customer!, order.Lines!.Count, items, total, largestSku!);
    }

    /// <summary>Counts primes up to <paramref name="limit"/> by trial division: CPU-bound, no allocation.</summary>
    public static PrimeCount CountPrimes(int limit)
    {
        int count = 0;
        for (int i = 2; i <= limit; i++)
        {
            bool prime = true;
            for (int d = 2; d * d <= i; d++)
            {
                if (i % d == 0)
                {
                    prime = false;
                    break;
                }
            }
            if (prime) count++;
        }
        return new PrimeCount(limit, count);
    }
}
