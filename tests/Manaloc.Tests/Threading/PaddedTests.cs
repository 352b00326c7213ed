using System.Runtime.CompilerServices;
using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class PaddedTests
{
    [Fact]
    public void Long_value_has_128_bytes_on_each_side()
    {
        AssertIsolated<long>();
        Assert.Equal(128 + 8 + 128, Unsafe.SizeOf<Padded<long>>());
    }

    [Fact]
    public void Unmanaged_struct_values_are_isolated_too()
    {
        AssertIsolated<(long, int, double)>();
        AssertIsolated<byte>();
        AssertIsolated<Guid>();
    }

    [Fact]
    public void Reference_values_in_an_array_are_at_least_256_bytes_apart()
    {
        // The runtime lays out structs holding references automatically (references first), so the
        // value leads its 256 bytes of padding instead of sitting in the middle (documented).
        var cells = new Padded<object?>[3];
        for (int i = 0; i < 2; i++)
        {
            long distance = (long)Unsafe.ByteOffset(ref cells[i].Value, ref cells[i + 1].Value);
            Assert.True(distance >= 256, $"cells {i} and {i + 1} are {distance} bytes apart");
        }
    }

    [Fact]
    public void Neighbouring_array_elements_are_at_least_128_bytes_apart()
    {
        var cells = new Padded<long>[4];
        for (int i = 0; i < 3; i++)
        {
            long distance = (long)Unsafe.ByteOffset(ref cells[i].Value, ref cells[i + 1].Value);
            Assert.True(distance >= 128, $"cells {i} and {i + 1} are {distance} bytes apart");
        }
    }

    [Fact]
    public void Value_is_a_writable_field()
    {
        var cells = new Padded<long>[2];
        Interlocked.Increment(ref cells[1].Value);
        cells[0].Value = 5;
        Assert.Equal(5, cells[0].Value);
        Assert.Equal(1, cells[1].Value);
        Assert.Equal("1", cells[1].ToString());
        Assert.Equal(7, new Padded<int>(7).Value);
    }

    private static void AssertIsolated<T>()
    {
        var box = new Padded<T>[1];
        ref byte start = ref Unsafe.As<Padded<T>, byte>(ref box[0]);
        ref byte value = ref Unsafe.As<T, byte>(ref box[0].Value);
        long before = (long)Unsafe.ByteOffset(ref start, ref value);
        long after = Unsafe.SizeOf<Padded<T>>() - before - Unsafe.SizeOf<T>();
        Assert.True(before >= 128, $"{typeof(T)}: only {before} bytes before the value");
        Assert.True(after >= 128, $"{typeof(T)}: only {after} bytes after the value");
    }
}
