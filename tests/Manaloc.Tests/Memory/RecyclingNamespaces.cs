// Two record interfaces with one simple name in two namespaces, for HandleRecyclingTests.

namespace Manaloc.Tests.Memory.RecyclingA
{
    // Same full name but for the namespace as RecyclingB.IDup: the two share a slab tag (tags are by name) and must
    // still never share recycled handles.
    public interface IDup { int Value { get; set; } }
}

namespace Manaloc.Tests.Memory.RecyclingB
{
    public interface IDup { long Value { get; set; } }
}
