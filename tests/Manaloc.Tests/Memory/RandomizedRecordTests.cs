using System.Reflection;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>
/// Defines many interfaces at run time with random property sets (some inheriting random bases),
/// writes random values through the generated records and checks every property after every write
/// against a plain managed model.
/// </summary>
public sealed class RandomizedRecordTests
{
    private static readonly (Type Type, Func<Random, object> Value)[] s_kinds =
    [
        (typeof(byte), r => (byte)r.Next(256)),
        (typeof(sbyte), r => (sbyte)r.Next(-128, 128)),
        (typeof(short), r => (short)r.Next(short.MinValue, short.MaxValue)),
        (typeof(ushort), r => (ushort)r.Next(ushort.MaxValue)),
        (typeof(int), r => r.Next(int.MinValue, int.MaxValue)),
        (typeof(uint), r => (uint)r.NextInt64(uint.MaxValue)),
        (typeof(long), r => r.NextInt64(long.MinValue, long.MaxValue)),
        (typeof(ulong), r => (ulong)r.NextInt64()),
        (typeof(float), r => (float)r.NextDouble()),
        (typeof(double), r => r.NextDouble() * 1e10),
        (typeof(bool), r => r.Next(2) == 1),
        (typeof(char), r => (char)r.Next(0x20, 0xD7FF)),
        (typeof(nint), r => (nint)r.NextInt64()),
        (typeof(decimal), r => new decimal(r.Next(), r.Next(), r.Next(), r.Next(2) == 1, (byte)r.Next(29))),
        (typeof(Guid), r => { var b = new byte[16]; r.NextBytes(b); return new Guid(b); }),
        (typeof(DateTime), r => new DateTime(r.NextInt64(DateTime.MaxValue.Ticks), DateTimeKind.Utc)),
        (typeof(TimeSpan), r => TimeSpan.FromTicks(r.NextInt64())),
        (typeof(Int128), r => new Int128((ulong)r.NextInt64(), (ulong)r.NextInt64())),
        (typeof(IntEnum), r => r.Next(2) == 1 ? IntEnum.A : IntEnum.B),
        (typeof(ByteEnum), r => (ByteEnum)r.Next(256)),
        (typeof(Point3), r => new Point3 { X = r.Next(), Y = r.Next(), Z = r.Next() }),
    ];

    private static readonly MethodInfo s_new = typeof(TypeAllocator).GetMethod(nameof(TypeAllocator.New))!;

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Random_interfaces_read_back_what_a_managed_model_holds(bool isChecked)
    {
        var random = new Random(isChecked ? 20261122 : 42);
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        for (int t = 0; t < 40; t++)
        {
            Type[] bases = [];
            var props = new List<(string, Type, bool, bool)>();
            if (random.Next(3) == 0)
            {
                var baseProps = Enumerable.Range(0, random.Next(1, 4)).Select(i => ($"B{i}", s_kinds[random.Next(s_kinds.Length)].Type, true, true)).ToList();
                bases = [RuntimeInterfaces.Define(baseProps)];
            }
            int count = random.Next(0, 12);
            for (int i = 0; i < count; i++) props.Add(($"P{i}", s_kinds[random.Next(s_kinds.Length)].Type, true, true));
            var type = RuntimeInterfaces.Define(props, bases);
            var layout = TypeLayout.Of(type);
            var properties = new[] { type }.Concat(type.GetInterfaces()).SelectMany(i => i.GetProperties()).ToArray();
            Assert.Equal(properties.Length, layout.Fields.Count);

            var records = Enumerable.Range(0, 3).Select(_ => s_new.MakeGenericMethod(type).Invoke(allocator, null)!).ToArray();
            var models = records.Select(_ => properties.ToDictionary(p => p, p => Activator.CreateInstance(p.PropertyType)!)).ToArray();
            for (int step = 0; step < 30 && properties.Length > 0; step++)
            {
                int which = random.Next(records.Length);
                var property = properties[random.Next(properties.Length)];
                var value = s_kinds.First(k => k.Type == property.PropertyType).Value(random);
                property.SetValue(records[which], value);
                models[which][property] = value;
                for (int r = 0; r < records.Length; r++)
                {
                    foreach (var p in properties)
                    {
                        Assert.Equal(models[r][p], p.GetValue(records[r]));
                    }
                }
            }
            var delete = typeof(TypeAllocator).GetMethod(nameof(TypeAllocator.Delete))!.MakeGenericMethod(type);
            foreach (var record in records) delete.Invoke(allocator, [record]);
        }
        Assert.Equal(0, allocator.CountLiveObjects());
    }
}
