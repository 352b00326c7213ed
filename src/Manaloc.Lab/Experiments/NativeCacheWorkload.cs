using System.Text;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// The native-cache workload: entry <c>i</c>'s key (16 to 48 ASCII characters, so as many UTF-8 bytes) and value
/// (64 to 512 bytes), both drawn from a bijective mix of <c>i</c> (SplitMix64, <see cref="NativeMapWorkload.Key"/>),
/// and the Zipf index streams the throughput loops read round and round.
/// </summary>
internal static class NativeCacheWorkload
{
    /// <summary>The shortest and longest key, in characters (ASCII: as many UTF-8 bytes).</summary>
    public const int MinKeyChars = 16, MaxKeyChars = 48;

    /// <summary>The shortest and longest value, in bytes.</summary>
    public const int MinValueBytes = 64, MaxValueBytes = 512;

    /// <summary>The mean key and value bytes of an entry (lengths are uniform over their ranges): 32 + 288.</summary>
    public const double MeanEntryBytes = (MinKeyChars + MaxKeyChars) / 2.0 + (MinValueBytes + MaxValueBytes) / 2.0;

    /// <summary>The Zipf exponent of the throughput streams (YCSB's default).</summary>
    public const double ZipfTheta = NativeMapWorkload.ZipfTheta;

    private const string Prefix = "key:";
    private const string Filler = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

    // What every value is a slice of: fixed bytes, so a value is reproducible from its index and costs nothing to make.
    private static readonly byte[] Source = MakeSource();

    private static ulong Mix(long index) => (ulong)NativeMapWorkload.Key(index);

    /// <summary>The length of key <paramref name="index"/>, from <see cref="MinKeyChars"/> to <see cref="MaxKeyChars"/>.</summary>
    public static int KeyLength(long index) => MinKeyChars + (int)(Mix(index) % (MaxKeyChars - MinKeyChars + 1));

    /// <summary>
    /// Writes key <paramref name="index"/> ("key:" + the decimal index + "-" + letters) into <paramref name="destination"/>
    /// (at least <see cref="MaxKeyChars"/> long) and returns its length. The index delimited by a dash and followed by
    /// letters only makes every key distinct. A nonzero <paramref name="salt"/> draws other letters (same lengths): a
    /// key set whose hashes, in any cache, are independent of the unsalted one's.
    /// </summary>
    public static int FormatKey(long index, Span<char> destination, ulong salt = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        int length = KeyLength(index);
        Prefix.CopyTo(destination);
        if (!index.TryFormat(destination[Prefix.Length..], out int digits, provider: CultureInfo.InvariantCulture))
        {
            throw new ArgumentException($"A key needs {MaxKeyChars} characters of room.", nameof(destination));
        }
        int at = Prefix.Length + digits;
        destination[at++] = '-';
        ulong letters = Mix(~index) ^ salt;
        for (; at < length; at++, letters = (letters >> 6) | (letters << 58)) destination[at] = Filler[(int)(letters % (ulong)Filler.Length)];
        return length;
    }

    /// <summary>Key <paramref name="index"/> as a string (<paramref name="salt"/>: see <see cref="FormatKey"/>).</summary>
    public static string KeyString(long index, ulong salt = 0)
    {
        Span<char> key = stackalloc char[MaxKeyChars];
        return new string(key[..FormatKey(index, key, salt)]);
    }

    /// <summary>Every key of indexes 0..<paramref name="count"/>-1 as strings (<paramref name="salt"/>: see <see cref="FormatKey"/>): the string-keyed variants' best case, a key the caller already holds.</summary>
    public static string[] KeyStrings(int count, ulong salt = 0)
    {
        var keys = new string[count];
        for (int i = 0; i < keys.Length; i++) keys[i] = KeyString(i, salt);
        return keys;
    }

    /// <summary>The length of value <paramref name="index"/>, from <see cref="MinValueBytes"/> to <see cref="MaxValueBytes"/>.</summary>
    public static int ValueLength(long index) => MinValueBytes + (int)((Mix(index) >> 32) % (MaxValueBytes - MinValueBytes + 1));

    /// <summary>The value stored with key <paramref name="index"/> when first set.</summary>
    public static ReadOnlySpan<byte> Value(long index) => Value(index, ValueLength(index));

    /// <summary>A value of <paramref name="length"/> bytes (at most <see cref="MaxValueBytes"/>) whose bytes depend on <paramref name="index"/>.</summary>
    public static ReadOnlySpan<byte> Value(long index, int length) => Source.AsSpan((int)((Mix(index) >> 16) & 511), length);

    /// <summary>The new value length of the write at position <paramref name="at"/> of a stream: a random size in the value range, independent of the key.</summary>
    public static int RewriteLength(long at) => ValueLength(~at);

    /// <summary>
    /// <paramref name="length"/> entry indexes (a power of two) of the first <paramref name="entries"/>, their ranks drawn
    /// from a Zipf distribution with exponent <paramref name="theta"/> and shuffled onto the indexes by a fixed-seed
    /// permutation, so the hot keys are spread over the insertion order.
    /// </summary>
    public static int[] Zipf(int entries, int length, int seed, double theta = ZipfTheta)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entries);
        if (length <= 0 || (length & (length - 1)) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, "A stream's length must be a positive power of two (the loops wrap with a mask).");
        }
        return ZipfTrace(entries, length, seed, theta);
    }

    /// <summary>As <see cref="Zipf"/>, of any length: a trace read once, front to back.</summary>
    public static int[] ZipfTrace(int entries, int length, int seed, double theta)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entries);
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        var random = new Random(seed);
        var sampler = new ZipfSampler(entries, theta);
        var rankToIndex = NativeMapWorkload.Permutation(entries, random);
        var stream = new int[length];
        for (int i = 0; i < stream.Length; i++) stream[i] = rankToIndex[sampler.Next(random.NextDouble())];
        return stream;
    }

    private static byte[] MakeSource()
    {
        var bytes = new byte[1024];
        new Random(33).NextBytes(bytes);
        return bytes;
    }
}

/// <summary>The forms of a request's key a cache reads, which <see cref="RequestKeys.Materialize"/> builds.</summary>
[Flags]
internal enum KeyForms
{
    /// <summary>A string of its own per position (the string-keyed caches, NativeCache's char keys, the floors).</summary>
    Strings = 1,

    /// <summary>The key's UTF-8 bytes per position (FASTER's keys).</summary>
    Utf8 = 2,

    /// <summary>Both.</summary>
    Both = Strings | Utf8,
}

/// <summary>
/// A stream's keys as requests bring them, materialized in access order before any timing: for each position, a fresh
/// string of its entry's key (allocated in stream order, so a loop reads the keys sequentially, as a request's key
/// arrives in cache) and its UTF-8 bytes (FASTER's keys), with the entry's index (the floor's); only the forms the cache
/// reads are built (<see cref="KeyForms"/>). No string is the instance a cache stored, nor shared with another position,
/// so a managed cache's hit compares the characters of its stored key, which is not in cache, as a service's does, and
/// no variant pays a random miss to fetch its key.
/// </summary>
/// <remarks>About 136 bytes a position for keys of 32 characters on average: 88 for the string, 8 for its reference,
/// 32 of UTF-8, 4 for its start and 4 for the index (136 MiB for a stream of 2^20 with both forms).</remarks>
internal sealed class RequestKeys
{
    private readonly string[]? _keys;
    private readonly byte[]? _utf8;
    private readonly int[]? _utf8Starts;
    private readonly int[] _indexes;

    private RequestKeys(string[]? keys, byte[]? utf8, int[]? utf8Starts, int[] indexes)
    {
        _keys = keys;
        _utf8 = utf8;
        _utf8Starts = utf8Starts;
        _indexes = indexes;
    }

    /// <summary>Positions in the stream (the loops go round them).</summary>
    public int Length => _indexes.Length;

    /// <summary>The forms built.</summary>
    public KeyForms Forms => (_keys is null ? 0 : KeyForms.Strings) | (_utf8 is null ? 0 : KeyForms.Utf8);

    /// <summary>The key at <paramref name="position"/>: a string of its own, equal to <see cref="NativeCacheWorkload.KeyString"/> of <see cref="Index"/>.</summary>
    /// <remarks>Built with <see cref="KeyForms.Strings"/> only (<see cref="Require"/> says so once, before a loop).</remarks>
    public string Key(int position) => _keys![position];

    /// <summary>The UTF-8 bytes of <see cref="Key"/> at <paramref name="position"/>.</summary>
    /// <remarks>Built with <see cref="KeyForms.Utf8"/> only (<see cref="Require"/> says so once, before a loop).</remarks>
    public ReadOnlySpan<byte> Utf8(int position)
    {
        int start = _utf8Starts![position];
        return _utf8.AsSpan(start, _utf8Starts[position + 1] - start);
    }

    /// <summary>The entry index at <paramref name="position"/>.</summary>
    public int Index(int position) => _indexes[position];

    /// <summary>Throws unless every form in <paramref name="forms"/> was built: a loop calls it once, not per key.</summary>
    /// <exception cref="InvalidOperationException">A form was not built.</exception>
    public void Require(KeyForms forms)
    {
        if ((forms & ~Forms) is var missing and not 0)
        {
            throw new InvalidOperationException($"The request keys were materialized as {Forms}, without {missing}, which this cache reads: materialize them with KeyForms.{forms}.");
        }
    }

    /// <summary>True when every key string is in GC generation <paramref name="generation"/> (or an older one); true when no string was built.</summary>
    public bool AllInGeneration(int generation)
    {
        foreach (string key in _keys ?? [])
        {
            if (GC.GetGeneration(key) < generation) return false;
        }
        return true;
    }

    /// <summary>
    /// Materializes <paramref name="forms"/> of the keys of <paramref name="stream"/> (entry indexes, at least one), in
    /// two halves of the work that <paramref name="runHalves"/> runs (side by side, say; by default one after the other).
    /// Both forms: the strings are half 0, one after another in stream order, and the UTF-8 bytes half 1. One form: half
    /// 0 builds the stream's first half of positions and half 1 the second, each half's strings one after another in
    /// stream order.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">An empty stream, or no form asked for.</exception>
    public static RequestKeys Materialize(int[] stream, Action<Action<int>>? runHalves = null, KeyForms forms = KeyForms.Both)
    {
        ArgumentOutOfRangeException.ThrowIfZero(stream.Length);
        if ((forms & KeyForms.Both) == 0 || (forms & ~KeyForms.Both) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(forms), forms, "Request keys need the strings, the UTF-8 bytes or both.");
        }
        bool strings = forms.HasFlag(KeyForms.Strings), utf8 = forms.HasFlag(KeyForms.Utf8);
        var keys = strings ? new string[stream.Length] : null;
        int[]? starts = null;
        byte[]? bytes = null;
        if (utf8)
        {
            starts = new int[stream.Length + 1];
            for (int i = 0; i < stream.Length; i++) starts[i + 1] = checked(starts[i] + NativeCacheWorkload.KeyLength(stream[i])); // ASCII: a byte a character
            bytes = new byte[starts[^1]];
        }
        void Build(int half)
        {
            // Both forms: a form per half over the whole stream. One form: that form over half the positions.
            bool both = strings && utf8, buildStrings = both ? half == 0 : strings;
            int middle = stream.Length / 2;
            int from = both || half == 0 ? 0 : middle, to = both || half == 1 ? stream.Length : middle;
            Span<char> key = stackalloc char[NativeCacheWorkload.MaxKeyChars];
            for (int i = from; i < to; i++)
            {
                if (buildStrings)
                {
                    keys![i] = NativeCacheWorkload.KeyString(stream[i]);
                    continue;
                }
                int length = NativeCacheWorkload.FormatKey(stream[i], key);
                if (Encoding.UTF8.GetBytes(key[..length], bytes.AsSpan(starts![i])) != starts[i + 1] - starts[i])
                {
                    throw new InvalidOperationException($"Key {stream[i]} is not ASCII: its UTF-8 length differs from its length.");
                }
            }
        }
        if (runHalves is not null)
        {
            runHalves(Build);
        }
        else
        {
            Build(0);
            Build(1);
        }
        return new RequestKeys(keys, bytes, starts, (int[])stream.Clone());
    }
}
