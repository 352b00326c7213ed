namespace Manaloc.Lab.Experiments;

/// <summary>The value every native-map variant stores: 24 bytes, no references (the GC does not trace it in any container).</summary>
internal struct MapValue(long a, long b, long c)
{
    public long A = a;
    public long B = b;
    public long C = c;
}

/// <summary>
/// The native-map workload: the keys, in insertion order, and the lookup streams over them. Key <c>i</c> is a bijective
/// mix of <c>i</c> (distinct 64-bit values spread like random ids): sequential ids would give <c>Dictionary</c> a
/// collision-free table (its bucket is the key modulo a prime above the count), a best case no other variant gets.
/// </summary>
internal static class NativeMapWorkload
{
    /// <summary>The Zipf exponent of the skewed stream (YCSB's default).</summary>
    public const double ZipfTheta = 0.99;

    /// <summary>The key inserted <paramref name="index"/>-th: SplitMix64's finaliser, a bijection on 64 bits, so no two indexes share a key.</summary>
    public static long Key(long index)
    {
        ulong z = (ulong)index + 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return (long)(z ^ (z >> 31));
    }

    /// <summary>The value stored with key index <paramref name="index"/>: its fields are checked by nothing but read by every lookup.</summary>
    public static MapValue ValueOf(long index) => new(index, ~index, index * 3);

    /// <summary>
    /// <paramref name="length"/> keys (a power of two) drawn uniformly from the first <paramref name="entries"/> inserted:
    /// every lookup is a hit.
    /// </summary>
    public static LookupStream Uniform(long entries, int length, int seed)
    {
        CheckArguments(entries, length);
        var random = new Random(seed);
        var indexes = new int[length];
        for (int i = 0; i < indexes.Length; i++) indexes[i] = (int)random.NextInt64(entries);
        return new LookupStream(indexes);
    }

    /// <summary>
    /// <paramref name="length"/> keys (a power of two) from the first <paramref name="entries"/> inserted, their ranks
    /// drawn from a Zipf distribution (<see cref="ZipfTheta"/>) and the ranks shuffled onto the keys with a fixed-seed
    /// permutation: the hot keys are not the first inserted, so they are not neighbours in any table that stores entries
    /// in insertion order (<c>Dictionary</c>'s entries array, FASTER's log).
    /// </summary>
    public static LookupStream Zipf(long entries, int length, int seed)
    {
        CheckArguments(entries, length);
        var random = new Random(seed);
        var sampler = new ZipfSampler(entries, ZipfTheta);
        var rankToIndex = Permutation(entries, random);
        var indexes = new int[length];
        for (int i = 0; i < indexes.Length; i++) indexes[i] = rankToIndex[sampler.Next(random.NextDouble())];
        return new LookupStream(indexes);
    }

    /// <summary>A uniformly random permutation of 0..<paramref name="count"/>-1 (Fisher–Yates).</summary>
    internal static int[] Permutation(long count, Random random)
    {
        if (count > Array.MaxLength) throw new ArgumentOutOfRangeException(nameof(count), count, "The native-map workload shuffles at most Array.MaxLength ranks.");
        var permutation = new int[count];
        for (int i = 0; i < permutation.Length; i++) permutation[i] = i;
        random.Shuffle(permutation);
        return permutation;
    }

    private static void CheckArguments(long entries, int length)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entries);
        if (entries > Array.MaxLength) throw new ArgumentOutOfRangeException(nameof(entries), entries, "The native-map workload draws from at most Array.MaxLength keys.");
        if (length <= 0 || (length & (length - 1)) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, "A lookup stream's length must be a positive power of two (the loops wrap with a mask).");
        }
    }
}

/// <summary>
/// A lookup stream: the insertion indexes drawn and, beside each, the key inserted at it. The maps look the keys up; the
/// floor (a plain array of the entries in insertion order) reads by the index and checks the key, one cache miss a lookup.
/// </summary>
internal sealed class LookupStream
{
    /// <summary>A stream of the keys inserted at <paramref name="indexes"/>, whose length is a power of two.</summary>
    public LookupStream(int[] indexes)
    {
        Indexes = indexes;
        Keys = new long[indexes.Length];
        for (int i = 0; i < indexes.Length; i++) Keys[i] = NativeMapWorkload.Key(indexes[i]);
    }

    /// <summary>The keys to look up, in order.</summary>
    public long[] Keys { get; }

    /// <summary>The insertion index of each key.</summary>
    public int[] Indexes { get; }

    /// <summary>Lookups before the stream wraps (a power of two: the loops wrap with a mask).</summary>
    public int Length => Keys.Length;
}

/// <summary>
/// Ranks 0..n-1 drawn from a Zipf distribution with exponent θ &lt; 1, by Gray et al.'s closed-form approximation
/// ("Quickly generating billion-record synthetic databases", the generator YCSB uses): rank 0 is the most frequent.
/// </summary>
internal sealed class ZipfSampler
{
    private readonly long _n;
    private readonly double _theta, _alpha, _zetaN, _eta, _half;

    /// <summary>A sampler over <paramref name="n"/> ranks; computing ζ(n) costs one power per rank, once.</summary>
    public ZipfSampler(long n, double theta)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(n);
        if (!(theta > 0 && theta < 1)) throw new ArgumentOutOfRangeException(nameof(theta), theta, "The Zipf exponent must lie strictly between 0 and 1 for this generator.");
        _n = n;
        _theta = theta;
        _alpha = 1 / (1 - theta);
        _zetaN = Zeta(n, theta);
        double zeta2 = Zeta(Math.Min(2, n), theta);
        _eta = n <= 2 ? 0 : (1 - Math.Pow(2.0 / n, 1 - theta)) / (1 - zeta2 / _zetaN);
        _half = 1 + Math.Pow(0.5, theta);
    }

    /// <summary>The rank for a uniform draw <paramref name="u"/> in [0, 1).</summary>
    public long Next(double u)
    {
        double uz = u * _zetaN;
        if (uz < 1 || _n == 1) return 0;
        if (uz < _half || _n == 2) return 1;
        long rank = (long)(_n * Math.Pow(_eta * u - _eta + 1, _alpha));
        return Math.Clamp(rank, 0, _n - 1);
    }

    /// <summary>The share of draws that rank 0 (the hottest key) gets: 1/ζ(n).</summary>
    public double HottestShare => 1 / _zetaN;

    private static double Zeta(long n, double theta)
    {
        double sum = 0;
        for (long i = 1; i <= n; i++) sum += 1 / Math.Pow(i, theta);
        return sum;
    }

    /// <inheritdoc/>
    public override string ToString() => $"Zipf(n={_n}, θ={_theta})";
}
