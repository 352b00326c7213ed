namespace Manaloc.Lab.Subjects;

/// <summary>
/// The lab's and the benchmarks' <c>streams</c> operation on a stream: the payload written in chunks, then read back
/// from the start in chunks of the same size.
/// </summary>
public static class StreamRoundTrip
{
    /// <summary>Writes <paramref name="size"/> bytes in writes of <paramref name="chunk"/>'s length, then reads them back from position 0 in reads of <paramref name="readBuffer"/>'s length; returns a checksum of the last byte of each read, so nothing is optimised away.</summary>
    public static long WriteThenRead(Stream stream, int size, byte[] chunk, byte[] readBuffer)
    {
        ArgumentNullException.ThrowIfNull(stream);
        for (int at = 0; at < size; at += chunk.Length) stream.Write(chunk, 0, Math.Min(chunk.Length, size - at));
        stream.Position = 0;
        long sink = 0;
        int read;
        while ((read = stream.Read(readBuffer, 0, readBuffer.Length)) > 0) sink += readBuffer[read - 1];
        return sink;
    }
}
