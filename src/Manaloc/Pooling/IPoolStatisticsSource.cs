namespace Manaloc.Pooling;

/// <summary>Anything whose counters the pooling meter publishes.</summary>
internal interface IPoolStatisticsSource
{
    /// <summary>The <c>pool</c> tag.</summary>
    string Name { get; }

    /// <summary>The kind tag: <c>object</c> or <c>buffer</c>.</summary>
    string Kind { get; }

    /// <summary>True when the statistics' byte figures are meaningful (buffer managers); the byte instruments skip the others.</summary>
    bool CountsBytes => false;

    /// <summary>A snapshot of the counters.</summary>
    PoolStatistics GetStatistics();
}
