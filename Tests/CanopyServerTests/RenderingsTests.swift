import CanopyCore
import Testing

@testable import CanopyServer

/// The initial values shared by the listens on one location until the next write.
@Suite("Shared renderings")
struct RenderingsTests {
    static let long = [UInt8](repeating: UInt8(ascii: "x"), count: Renderings.sharedLimit)

    @Test("a long rendering is reused while some connection holds it, until the data changes; a short one is not kept")
    func sharing() throws {
        var renderings = Renderings()
        let location = DatabasePath([ChildKey("big")])
        var renders = 0
        let render = {
            renders += 1
            return Self.long
        }
        let first = renderings.rendering(at: location, render: render)
        let second = renderings.rendering(at: location, render: render)
        #expect(first === second && renders == 1)
        #expect(renderings.rendering(at: DatabasePath([ChildKey("other")]), render: render) !== first)
        renderings.removeAll()
        let third = renderings.rendering(at: location, render: render)
        #expect(third !== first && renders == 3)
        // Weak: once no connection holds it, the next listen renders afresh.
        var held: Rendering? = renderings.rendering(at: DatabasePath([ChildKey("gone")]), render: render)
        #expect(held != nil && renders == 4)
        held = nil
        _ = renderings.rendering(at: DatabasePath([ChildKey("gone")]), render: render)
        #expect(renders == 5)
        // A short rendering is made for each listen.
        let short = { Array("{}".utf8) }
        #expect(
            renderings.rendering(at: location.appending(ChildKey("s")), render: short)
                !== renderings.rendering(at: location.appending(ChildKey("s")), render: short))
    }
}
