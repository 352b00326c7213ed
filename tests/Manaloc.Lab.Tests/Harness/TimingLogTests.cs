using System.Globalization;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class TimingLogTests
{
    [Fact]
    public void A_child_row_carries_its_marks_and_the_parent_s_way_out_figure()
    {
        var stderr = new StringWriter();
        stderr.WriteLine("some other line the child printed");
        TimingLog.WriteChildMark(stderr, "entry");
        TimingLog.WriteChildMark(stderr, "result");
        string path = Path.Combine(Path.GetTempPath(), $"manaloc-timing-{Guid.NewGuid():N}.tsv");
        try
        {
            TimingLog.Append(path, ["child", "gc-modes", "run", "--mode", "quick"], stderr.ToString(), resultAt: 1.25, exitedAt: 1.5);
            string[] cells = File.ReadAllText(path).TrimEnd('\n').Split('\t');
            Assert.Equal(11, cells.Length);
            Assert.Equal(("gc-modes", "run"), (cells[0], cells[1]));
            double entryWall = double.Parse(cells[2], CultureInfo.InvariantCulture), entryCpu = double.Parse(cells[3], CultureInfo.InvariantCulture);
            double resultWall = double.Parse(cells[4], CultureInfo.InvariantCulture);
            Assert.True(entryWall >= 0 && entryCpu > 0 && resultWall >= entryWall, string.Join(' ', cells));
            Assert.Equal(("", ""), (cells[6], cells[7])); // no written mark: empty, not made up
            Assert.Equal(("1.250", "1.500", "0.250"), (cells[8], cells[9], cells[10]));
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void A_child_asked_for_its_timings_still_sends_its_result_back()
    {
        string path = Path.Combine(Path.GetTempPath(), $"manaloc-timing-{Guid.NewGuid():N}.tsv");
        var output = ChildProcess.Run(
            ["child", "clock-allocations", "measure", "--mode", "smoke"],
            new Dictionary<string, string?> { [TimingLog.Variable] = path },
            TimeSpan.FromMinutes(1));
        Assert.NotEmpty(output.Measurements);
        Assert.False(File.Exists(path)); // the child only marks its stderr; the parent, not asked here, writes no row
    }
}
