// Two record interfaces with one simple name in two namespaces, for HandleRecyclingTests.

namespace Manaloc.Tests.Memory.RecyclingA
{
    // Same name but for the namespace as RecyclingB.IDup: the two must never share recycled handles, nor a leak-report entry.
    public interface IDup { int Value { get; set; } }
}

namespace Manaloc.Tests.Memory.RecyclingB
{
    public interface IDup { long Value { get; set; } }
}
