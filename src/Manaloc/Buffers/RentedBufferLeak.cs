namespace Manaloc.Buffers;

/// <summary>A <see cref="RentedBuffer"/> that the GC found unreachable before it was disposed (reported in debug mode).</summary>
/// <remarks>Immutable; safe to pass between threads. Its array never went back to the manager (the GC collected it): dispose every rented buffer, with <c>using</c>.</remarks>
public sealed class RentedBufferLeak
{
    // Built by the manager only (internal constructor and setters): a field added later is a new property, not a break.
    internal RentedBufferLeak()
    {
    }

    /// <summary>The <see cref="BufferManager.Name"/> of the manager it was rented from.</summary>
    public string ManagerName { get; internal init; } = "";

    /// <summary>The length asked for.</summary>
    public int Length { get; internal init; }

    /// <summary>The stack of the <see cref="BufferManager.RentBuffer"/> call, one frame a line.</summary>
    public string RentedAt { get; internal init; } = "";

    /// <summary>One line saying what leaked, then the stack where it was rented, indented.</summary>
    public override string ToString()
    {
        var sb = new System.Text.StringBuilder();
        sb.Append("Leak: a RentedBuffer of ").Append(Length).Append(" bytes from BufferManager '").Append(ManagerName)
          .AppendLine("' was never disposed (its array never went back). Rented at:");
        foreach (var line in RentedAt.Split('\n', StringSplitOptions.RemoveEmptyEntries)) sb.Append("    ").AppendLine(line.TrimEnd());
        return sb.ToString();
    }
}
