using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text.Json;
using System.Text.Json.Serialization;
using Manaloc.Memory;
using Manaloc.Pooling;
using Manaloc.Threading;

namespace AotSample;

/// <summary>
/// Exercises Manaloc under NativeAOT and checks every result: compile-time records (class handles from
/// New, struct handles, a record array), an object pool, the economic reset event and the dedicated-thread
/// dispatcher. Prints one line per check and "all checks passed"; exits 1 on the first wrong result.
/// </summary>
public static class Program
{
    private static int s_failures;

    public static int Main()
    {
        Console.WriteLine($"dynamic code supported: {RuntimeFeature.IsDynamicCodeSupported}");
        Records();
        Json();
        StructHandles();
        Pool();
        EventAndDispatcher();
        UnmarkedInterfaceIsRefusedWithoutDynamicCode();
        Console.WriteLine(s_failures == 0 ? "all checks passed" : $"{s_failures} checks failed");
        return s_failures == 0 ? 0 : 1;
    }

    private static void Check(bool ok, string what)
    {
        Console.WriteLine($"{(ok ? "ok  " : "FAIL")} {what}");
        if (!ok) s_failures++;
    }

    private static void Records()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "aot-sample" });
        // New, NewArray and PreGenerate with a [NativeRecord] interface: intercepted by the generator, so no trim/AOT warning.
        allocator.PreGenerate(typeof(IOrder));
        var order = allocator.New<IOrder>();
        Check(order.GetType().Name.Contains(nameof(IOrder), StringComparison.Ordinal), $"the class handle's type has a readable name ({order.GetType().Name})");
        order.Id = 42;
        order.Price = 9.75m;
        order.Quantity = 3;
        order.Side = Side.Sell;
        Check(order.Id == 42 && order.Price == 9.75m && order.Quantity == 3 && order.Side == Side.Sell, "New<IOrder> reads back what was written");
        allocator.Delete(order);
        Check(Throws<InvalidOperationException>(() => _ = order.Id), "a class handle used after Delete throws");

        using var book = allocator.NewArray<IOrder>(1000);
        for (int i = 0; i < book.Length; i++)
        {
            var row = book.MoveTo(i);
            row.Id = i;
            row.Quantity = i % 7;
        }
        long ids = 0, quantities = 0;
        foreach (var row in book.Scan()) // one moving view: allocation-free, not to be saved
        {
            ids += row.Id;
            quantities += row.Quantity;
        }
        Check(ids == 999 * 1000 / 2 && quantities == Enumerable.Range(0, 1000).Sum(i => i % 7), "a 1000-record array sums as expected");

        // foreach and LINQ over the array hand out items that stay on their records (the generated item class, under AOT too).
        var sixes = book.Where(o => o.Quantity == 6).ToList();
        Check(sixes.Count == 1000 / 7 && sixes.Select(o => o.Id).SequenceEqual(Enumerable.Range(0, 1000).Where(i => i % 7 == 6).Select(i => (long)i)),
            "LINQ over a record array keeps every record it selected");
        var kept = book[6];
        book.Dispose();
        Check(Throws<InvalidOperationException>(() => _ = kept.Id), "a saved item used after its array's Dispose throws");
    }

    private static void Json()
    {
        // Source generation only (no reflection under NativeAOT): the context lists the record interface, and the records'
        // resolver gives a record's generated run-time class its contract, so a record as object writes its data.
        var options = new JsonSerializerOptions();
        options.TypeInfoResolverChain.Add(OrderJsonContext.Default);
        options.TypeInfoResolverChain.Add(NativeRecordJson.TypeInfoResolver);
        var asObject = options.GetTypeInfo(typeof(object)); // what an endpoint returning object, or Serialize(object), uses
        using var allocator = new TypeAllocator();
        var order = allocator.New<IOrder>();
        order.Id = 7;
        order.Price = 1.5m;
        order.Quantity = 2;
        order.Side = Side.Sell;
        const string expected = """{"Id":7,"Price":1.5,"Quantity":2,"Side":1}""";
        string json = JsonSerializer.Serialize(order, asObject);
        Check(json == expected, $"a record serialized as object writes its data ({json})");
        Check(JsonSerializer.Serialize(order, OrderJsonContext.Default.IOrder) == expected, "a record serialized as its interface writes its data");
        allocator.Delete(order);
        Check(Throws<InvalidOperationException>(() => JsonSerializer.Serialize(order, asObject)), "a deleted record throws when serialized");

        var array = allocator.NewArray<IOrder>(2);
        array.MoveTo(1).Id = 9;
        Check(JsonSerializer.Serialize(array[1], asObject).StartsWith("""{"Id":9,""", StringComparison.Ordinal), "an array item serialized as object writes its data");
        Check(JsonSerializer.Serialize(array.MoveTo(1), asObject).StartsWith("""{"Id":9,""", StringComparison.Ordinal), "the array's view serialized as object writes its data");
        var item = array[1];
        array.Dispose();
        Check(Throws<ObjectDisposedException>(() => JsonSerializer.Serialize(item, asObject)), "an item of a disposed array throws when serialized");
    }

    private static void StructHandles()
    {
        var allocator = new TypeAllocator();
        var orders = new OrderRef[10_000];
        for (int i = 0; i < orders.Length; i++)
        {
            orders[i] = OrderRef.New(allocator);
            orders[i].Id = i;
            orders[i].Price = i / 4m;
        }
        decimal total = 0;
        foreach (var o in orders) total += o.Price;
        Check(total == Enumerable.Range(0, orders.Length).Sum(i => i / 4m), "10,000 struct handles hold their values");

        var first = orders[0];
        first.Delete(allocator);
        Check(!orders[0].IsAllocated && Throws<InvalidOperationException>(() => _ = orders[0].Id), "a copy of a deleted struct handle throws on use");
        Check(Throws<InvalidOperationException>(() => orders[0].Delete(allocator)), "a second Delete of a struct handle throws");

        var raw = OrderUncheckedRef.New(allocator);
        raw.Quantity = 5;
        Check(raw.Quantity == 5, "an unchecked struct handle reads back");
        raw.Delete(allocator);

        var heap = allocator.GetThreadHeap();
        var viaHeap = OrderRef.New(heap);
        viaHeap.Quantity = 3;
        Check(viaHeap.Quantity == 3 && System.Runtime.CompilerServices.Unsafe.SizeOf<OrderRef>() == 16, "a 16-byte struct handle made through the thread's heap reads back");
        viaHeap.Delete(heap);
        Check(Throws<InvalidOperationException>(() => viaHeap.Delete(heap)), "a second Delete through the heap throws");

        allocator.Dispose();
        Check(Throws<ObjectDisposedException>(() => _ = orders[1].Id), "a struct handle used after the allocator's Dispose throws");
        Check(allocator.LastLeakReport!.Entries.Sum(e => e.Count) == orders.Length - 1, "the leak report counts the records never deleted");
    }

    private static void Pool()
    {
        using var pool = new SemiLocalPool<StringWriter>(PoolPolicies.Create(() => new StringWriter(), w => { w.GetStringBuilder().Clear(); return true; }));
        var first = pool.Rent();
        first.Write("hello");
        pool.Return(first);
        var again = pool.Rent();
        Check(ReferenceEquals(first, again) && again.ToString().Length == 0, "the pool hands back the returned, reset object");
        pool.Return(again);
    }

    private static void EventAndDispatcher()
    {
        using var dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "aot-sample", ThreadCount = 2 });
        using var done = new EconomicResetEvent();
        const int Items = 10_000;
        int executed = 0;
        for (int i = 0; i < Items; i++)
        {
            dispatcher.Post(() =>
            {
                if (Interlocked.Increment(ref executed) == Items) done.Set();
            });
        }
        Check(done.Wait(TimeSpan.FromSeconds(30)) && Volatile.Read(ref executed) == Items, $"the dispatcher ran {Items:N0} items and the event woke the waiter");
        Check(dispatcher.Shutdown(TimeSpan.FromSeconds(10)).Count == 0, "the dispatcher shut down with nothing left over");
    }

    // The one call of the general path in this program, kept to show what NativeAOT does with it (NotSupportedException);
    // its warnings are suppressed here because the exception is the expected result. UnmarkedCall.cs, compiled with
    // -p:AotSampleUnmarkedCall=true, makes the same call unsuppressed: CI checks that it warns (IL2026, IL3050).
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Demonstrates the refusal of an unmarked interface; the check expects it.")]
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Demonstrates the refusal of an unmarked interface; the check expects it.")]
    private static void UnmarkedInterfaceIsRefusedWithoutDynamicCode()
    {
        using var allocator = new TypeAllocator();
        if (RuntimeFeature.IsDynamicCodeSupported)
        {
            var plain = allocator.New<IUnmarked>();
            plain.Value = 1;
            Check(plain.Value == 1, "on the JIT an unmarked interface is generated at run time");
            return;
        }
        try
        {
            allocator.New<IUnmarked>();
            Check(false, "an unmarked interface is refused under NativeAOT");
        }
        catch (NotSupportedException e)
        {
            Check(e.Message.Contains("[Manaloc.Memory.NativeRecord]", StringComparison.Ordinal), "an unmarked interface is refused under NativeAOT, naming [NativeRecord]");
        }
    }

    private static bool Throws<TException>(Action action) where TException : Exception
    {
        try
        {
            action();
            return false;
        }
        catch (TException)
        {
            return true;
        }
    }
}

public enum Side : byte { Buy, Sell }

[NativeRecord]
public interface IOrder
{
    long Id { get; set; }
    decimal Price { get; set; }
    int Quantity { get; set; }
    Side Side { get; set; }
}

public interface IUnmarked
{
    int Value { get; set; }
}

/// <summary>The application's System.Text.Json context: it lists the record interface (the records' resolver does the rest).</summary>
[JsonSerializable(typeof(IOrder))]
[JsonSerializable(typeof(object))]
internal sealed partial class OrderJsonContext : JsonSerializerContext;
