using System.Buffers;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary>The ArrayPool contract; the runtime's shared pool runs the same tests as the reference.</summary>
public abstract class ArrayPoolContractTests
{
    protected abstract ArrayPool<byte> Pool { get; }

    [Fact]
    public void Rent_zero_returns_an_empty_array()
    {
        Assert.Empty(Pool.Rent(0));
        Assert.Same(Array.Empty<byte>(), Pool.Rent(0));
    }

    [Fact]
    public void Rent_negative_throws_ArgumentOutOfRange() => Assert.Throws<ArgumentOutOfRangeException>(() => Pool.Rent(-1));

    [Theory]
    [InlineData(1)]
    [InlineData(16)]
    [InlineData(17)]
    [InlineData(4096)]
    [InlineData(5000)]
    [InlineData(1 << 20)]
    public void Rent_returns_at_least_the_length(int length)
    {
        var array = Pool.Rent(length);
        Assert.True(array.Length >= length);
        Pool.Return(array);
    }

    [Fact]
    public void Return_null_throws_ArgumentNull() => Assert.Throws<ArgumentNullException>(() => Pool.Return(null!));

    [Theory]
    [InlineData(17)]
    [InlineData(100)]
    [InlineData(4095)]
    public void Returning_an_array_of_no_class_size_throws_ArgumentException(int length)
        => Assert.Throws<ArgumentException>(() => Pool.Return(new byte[length]));

    [Fact]
    public void Returning_an_empty_array_is_ignored() => Pool.Return([]);

    [Fact]
    public void ClearArray_zeroes_the_array_before_reuse()
    {
        var array = Pool.Rent(4096);
        array.AsSpan().Fill(0xAB);
        Pool.Return(array, clearArray: true);
        Assert.All(array, b => Assert.Equal(0, b));
    }

    [Fact]
    public void A_returned_array_is_reused_on_the_same_thread()
    {
        var array = Pool.Rent(2048);
        Pool.Return(array);
        Assert.Same(array, Pool.Rent(2048));
    }
}

public sealed class SharedArrayPoolContractTests : ArrayPoolContractTests
{
    protected override ArrayPool<byte> Pool => ArrayPool<byte>.Shared;
}

public sealed class BufferManagerContractTests : ArrayPoolContractTests, IDisposable
{
    private readonly BufferManager _pool = new(new BufferManagerOptions { Name = "contract-buffers" });

    protected override ArrayPool<byte> Pool => _pool;

    public void Dispose() => _pool.Dispose();
}
