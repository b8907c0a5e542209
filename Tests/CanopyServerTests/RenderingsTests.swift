import CanopyCore
import Testing

@testable import CanopyServer

/// The initial values shared by the listens on one location until the next write.
@Suite("Shared renderings")
struct RenderingsTests {
    static let long = [UInt8](repeating: UInt8(ascii: "x"), count: Renderings.sharedLimit)
    static let renderer = EventStreamRenderer.shared

    @Test("a long rendering is reused per wire format while some connection holds it, until the data changes; a short one is not kept")
    func sharing() throws {
        var renderings = Renderings()
        let location = DatabasePath([ChildKey("big")])
        var renders = 0
        let render = {
            renders += 1
            return Self.long
        }
        let first = renderings.rendering(at: location, renderer: Self.renderer, render: render)
        let second = renderings.rendering(at: location, renderer: Self.renderer, render: render)
        #expect(first === second && renders == 1)
        #expect(renderings.rendering(at: DatabasePath([ChildKey("other")]), renderer: Self.renderer, render: render) !== first)
        // Another wire format renders its own.
        let wire = renderings.rendering(at: location, renderer: WireRenderer.shared, render: render)
        #expect(wire !== first && renders == 3)
        renderings.removeAll()
        let third = renderings.rendering(at: location, renderer: Self.renderer, render: render)
        #expect(third !== first && renders == 4)
        // Weak: once no connection holds it, the next listen renders afresh.
        var held: Rendering? = renderings.rendering(at: DatabasePath([ChildKey("gone")]), renderer: Self.renderer, render: render)
        #expect(held != nil && renders == 5)
        held = nil
        _ = renderings.rendering(at: DatabasePath([ChildKey("gone")]), renderer: Self.renderer, render: render)
        #expect(renders == 6)
        // A short rendering is made for each listen.
        let short = { Array("{}".utf8) }
        #expect(
            renderings.rendering(at: location.appending(ChildKey("s")), renderer: Self.renderer, render: short)
                !== renderings.rendering(at: location.appending(ChildKey("s")), renderer: Self.renderer, render: short))
    }
}
