// Correct pooled-array code in the shapes .NET libraries use; the analyzer must say nothing.
using System.IO;
using System.Text;

namespace Corpus;

public sealed class ArrayPoolCorrect
{
    private readonly ArrayPool<byte> _pool = ArrayPool<byte>.Create();
    private byte[]? _buffer;
    private byte[] _scratch = Array.Empty<byte>();

    // expect: none
    public int RentTryFinally(Stream s, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try { return Io.Read(s, buffer, n); }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public void RentTryFinallyClear(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Fill(buffer); }
        finally { ArrayPool<byte>.Shared.Return(buffer, clearArray: true); }
    }

    // expect: none
    public void RentFromFieldPool(int n)
    {
        byte[] buffer = _pool.Rent(n);
        try { Io.Fill(buffer.AsSpan(0, n)); }
        finally { _pool.Return(buffer); }
    }

    // expect: none
    public void RentFromParameterPool(ArrayPool<char> pool, string text)
    {
        char[] chars = pool.Rent(text.Length);
        try { text.CopyTo(0, chars, 0, text.Length); }
        finally { pool.Return(chars); }
    }

    // expect: none
    public void RentNoThrowBetween(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        buffer[0] = 1;
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void RentSpanOnly(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        Span<byte> span = buffer.AsSpan(0, n);
        span.Clear();
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public int StackallocFallback(int n)
    {
        byte[]? rented = null;
        Span<byte> buffer = n <= 256 ? stackalloc byte[256] : (rented = ArrayPool<byte>.Shared.Rent(n));
        try
        {
            Io.Fill(buffer.Slice(0, n));
            return Io.Sum(buffer.Slice(0, n));
        }
        finally
        {
            if (rented is not null) ArrayPool<byte>.Shared.Return(rented);
        }
    }

    // expect: none
    public int StackallocFallbackNullCompare(int n)
    {
        char[]? rented = null;
        Span<char> chars = n > 128 ? (rented = ArrayPool<char>.Shared.Rent(n)) : stackalloc char[128];
        try { chars.Fill('x'); return chars.Length; }
        finally { if (rented != null) ArrayPool<char>.Shared.Return(rented); }
    }

    // expect: none
    public void ConditionalRentReturnedOnSameCondition(int n)
    {
        byte[]? rented = null;
        if (n > 512) rented = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Consume(n); }
        finally { if (n > 512) ArrayPool<byte>.Shared.Return(rented!); }
    }

    // expect: none
    public void ConditionalRentNullTestAfter(int n)
    {
        byte[]? rented = n > 64 ? ArrayPool<byte>.Shared.Rent(n) : null;
        Io.Consume(n);
        if (rented != null) ArrayPool<byte>.Shared.Return(rented);
    }

    // expect: none
    public void RentedArrayHandedToOwner(int n, List<ArrayOwner> owners)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        owners.Add(new ArrayOwner(buffer));
    }

    // expect: none
    public ArrayOwner RentedArrayOwnerReturned(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        return new ArrayOwner(buffer);
    }

    // expect: none
    public void RentIntoField(int n)
    {
        _buffer = ArrayPool<byte>.Shared.Rent(n);
    }

    // expect: none
    public void RentIntoFieldThroughLocal(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        _scratch = buffer;
    }

    // expect: none
    public void ReturnFieldBuffer()
    {
        byte[]? buffer = _buffer;
        _buffer = null;
        if (buffer is not null) ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void GrowFieldBuffer(int needed)
    {
        if (_scratch.Length >= needed) return;
        byte[] bigger = ArrayPool<byte>.Shared.Rent(needed);
        _scratch.AsSpan().CopyTo(bigger);
        byte[] old = _scratch;
        _scratch = bigger;
        if (old.Length > 0) ArrayPool<byte>.Shared.Return(old);
    }

    // expect: none
    public byte[] RentAndReturnToCaller(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        buffer.AsSpan().Clear();
        return buffer;
    }

    // expect: none
    public bool TryRentOut(int n, out byte[] buffer)
    {
        buffer = ArrayPool<byte>.Shared.Rent(n);
        return true;
    }

    // expect: none
    public bool TryRentThroughLocalOut(int n, out byte[]? buffer)
    {
        byte[] rented = ArrayPool<byte>.Shared.Rent(n);
        if (n == 0)
        {
            ArrayPool<byte>.Shared.Return(rented);
            buffer = null;
            return false;
        }
        buffer = rented;
        return true;
    }

    // expect: none
    public void PassedToKeeper(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        Io.Keep(buffer);
    }

    // expect: none
    public void LoopRentReturn(int count)
    {
        for (int i = 0; i < count; i++)
        {
            byte[] buffer = ArrayPool<byte>.Shared.Rent(64);
            try { Io.Fill(buffer); }
            finally { ArrayPool<byte>.Shared.Return(buffer); }
        }
    }

    // expect: none
    public void LoopRentReturnNoThrow(int count)
    {
        for (int i = 0; i < count; i++)
        {
            byte[] buffer = ArrayPool<byte>.Shared.Rent(64);
            buffer[0] = (byte)i;
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    // expect: none
    public void GrowInLoop(Stream s)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(256);
        try
        {
            int total = 0;
            while (true)
            {
                int read = Io.Read(s, buffer, buffer.Length - total);
                if (read == 0) break;
                total += read;
                if (total == buffer.Length)
                {
                    byte[] next = ArrayPool<byte>.Shared.Rent(buffer.Length * 2);
                    buffer.AsSpan().CopyTo(next);
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = next;
                }
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    // expect: none
    public void EarlyReturnBeforeRent(int n)
    {
        if (n <= 0) return;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Fill(buffer); }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public int EarlyReturnInsideTry(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try
        {
            if (n < 10) return 0;
            Io.Fill(buffer);
            return buffer[0];
        }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public int SwitchInsideTry(int n, int mode)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try
        {
            switch (mode)
            {
                case 0: return 0;
                case 1: Io.Fill(buffer); return 1;
                default: throw new ArgumentOutOfRangeException(nameof(mode));
            }
        }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public void ReturnInBothBranches(int n, bool flag)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        if (flag)
        {
            buffer[0] = 1;
            ArrayPool<byte>.Shared.Return(buffer);
        }
        else
        {
            ArrayPool<byte>.Shared.Return(buffer, true);
        }
    }

    // expect: none
    public void CatchReturnRethrow(Stream s, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try
        {
            Io.Write(s, buffer, n);
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(buffer);
            throw;
        }
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public async Task WriteAsync(Stream s, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try { await s.WriteAsync(buffer.AsMemory(0, n)); }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public async Task<int> ReadAsync(Stream s, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try
        {
            int read = await s.ReadAsync(buffer.AsMemory(0, n));
            return read;
        }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public async ValueTask CopyAsync(Stream from, Stream to)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(8192);
        try
        {
            int read;
            while ((read = await from.ReadAsync(buffer.AsMemory())) > 0)
                await to.WriteAsync(buffer.AsMemory(0, read));
        }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public string EncodeWithPool(string text)
    {
        int max = Encoding.UTF8.GetMaxByteCount(text.Length);
        byte[] bytes = ArrayPool<byte>.Shared.Rent(max);
        try
        {
            int written = Encoding.UTF8.GetBytes(text, 0, text.Length, bytes, 0);
            return Convert.ToBase64String(bytes, 0, written);
        }
        finally { ArrayPool<byte>.Shared.Return(bytes); }
    }

    // expect: none
    public void LambdaRentsAndReturns(List<int> sizes)
    {
        sizes.ForEach(n =>
        {
            byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
            try { Io.Fill(buffer); }
            finally { ArrayPool<byte>.Shared.Return(buffer); }
        });
    }

    // expect: none
    public void LocalFunctionRentsAndReturns(int n)
    {
        Work(n);
        Work(n * 2);

        static void Work(int size)
        {
            int[] ints = ArrayPool<int>.Shared.Rent(size);
            try { ints.AsSpan().Fill(size); }
            finally { ArrayPool<int>.Shared.Return(ints); }
        }
    }

    // expect: none
    public void CapturedByLambda(int n, List<Action> later)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        later.Add(() => ArrayPool<byte>.Shared.Return(buffer));
    }

    // expect: none
    public void UsingOwner(int n)
    {
        using var owner = new ArrayOwner(ArrayPool<byte>.Shared.Rent(n));
        Io.Fill(owner.Span);
    }

    // expect: none
    public void TupleStored(int n, List<(byte[], int)> list)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        list.Add((buffer, n));
    }

    // expect: none
    public void StoredInArray(int n, byte[][] slots)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        slots[0] = buffer;
    }

    // expect: none
    public void NestedTry(Stream s, int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        try
        {
            byte[] b = ArrayPool<byte>.Shared.Rent(n);
            try { Io.Read(s, a, n); Io.Read(s, b, n); }
            finally { ArrayPool<byte>.Shared.Return(b); }
        }
        finally { ArrayPool<byte>.Shared.Return(a); }
    }

    // expect: none
    public void TwoArraysOneFinally(int n)
    {
        byte[]? a = null, b = null;
        try
        {
            a = ArrayPool<byte>.Shared.Rent(n);
            b = ArrayPool<byte>.Shared.Rent(n);
            Io.Fill(a); Io.Fill(b);
        }
        finally
        {
            if (a != null) ArrayPool<byte>.Shared.Return(a);
            if (b != null) ArrayPool<byte>.Shared.Return(b);
        }
    }

    // expect: none
    public void ReturnThenRentAgain(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        buffer[0] = 1;
        ArrayPool<byte>.Shared.Return(buffer);
        buffer = ArrayPool<byte>.Shared.Rent(n * 2);
        buffer[0] = 2;
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void ReturnThenNull(int n)
    {
        byte[]? buffer = ArrayPool<byte>.Shared.Rent(n);
        buffer[0] = 1;
        ArrayPool<byte>.Shared.Return(buffer);
        buffer = null;
        Io.Consume(buffer!);
    }

    // expect: none
    public int ReadLengthBeforeReturn(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        int length = buffer.Length;
        ArrayPool<byte>.Shared.Return(buffer);
        return length;
    }

    // expect: none
    public void GenericPool<T>(int n, T value)
    {
        T[] items = ArrayPool<T>.Shared.Rent(n);
        try { items.AsSpan(0, n).Fill(value); }
        finally { ArrayPool<T>.Shared.Return(items, clearArray: true); }
    }

    // expect: none
    public void FlagGuardedFinally(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        bool returned = false;
        try
        {
            Io.Fill(buffer);
            ArrayPool<byte>.Shared.Return(buffer);
            returned = true;
        }
        finally
        {
            if (!returned) ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    // expect: none
    public void UsingAfterReturnInOtherBranch(int n, bool early)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        if (early)
        {
            ArrayPool<byte>.Shared.Return(buffer);
            return;
        }
        buffer[0] = 1;
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void TryCatchAllSwallow(Stream s, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Read(s, buffer, n); }
        catch (Exception) { Io.Consume(s); }
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void UsingDeclarationOwner(int n)
    {
        using ArrayOwner owner = RentedArrayOwnerReturned(n);
        owner.Span.Clear();
    }

    // expect: none
    public Memory<byte> ReturnAsMemory(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        return buffer.AsMemory(0, n);
    }

    // expect: none
    public void DoWhileRent(int n)
    {
        int i = 0;
        do
        {
            char[] chars = ArrayPool<char>.Shared.Rent(n);
            try { chars[0] = 'a'; Io.Consume(chars[0]); }
            finally { ArrayPool<char>.Shared.Return(chars); }
            i++;
        } while (i < 3);
    }

    // expect: none
    public void ForeachRent(IEnumerable<int> sizes)
    {
        foreach (int n in sizes)
        {
            byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
            try { Io.Fill(buffer); }
            finally { ArrayPool<byte>.Shared.Return(buffer); }
        }
    }

    // expect: none
    public void SwitchExpressionSize(int kind)
    {
        int size = kind switch { 0 => 16, 1 => 256, _ => 4096 };
        byte[] buffer = ArrayPool<byte>.Shared.Rent(size);
        try { Io.Fill(buffer); }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }
}
