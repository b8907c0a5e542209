import CanopyLoop
import Foundation
import Testing

@Suite("Support types")
struct SupportTypeTests {
    @Test("UVError names the libuv error and its message")
    func uvErrorDescription() {
        let busy = UVError(code: -16)
        #expect(busy.name == "EBUSY")
        #expect(busy.message == "resource busy or locked")
        #expect(busy.description == "EBUSY (-16): resource busy or locked")
        #expect(UVError(code: -123_456).name.contains("123456"))
    }

    @Test("loop-thread-only APIs trap on other threads")
    func loopOnlyAPIsTrap() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            loop.schedule(after: .zero) {}
        }
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            _ = LoopBound(0, loop: loop).value
        }
    }
}
