import CanopyLoop

extension Database {
    /// Stops a debug build when the caller is not on this database's loop thread (for loop-only
    /// state that lives outside the library, such as the server's stream hub). Free in release.
    package func assertOnLoop(
        _ message: @autoclosure () -> String = "must be called on the database's loop thread", file: StaticString = #fileID,
        line: UInt = #line
    ) {
        self.core.loop.assertOnLoop(message(), file: file, line: line)
    }
}
