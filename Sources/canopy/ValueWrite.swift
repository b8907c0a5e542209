import ArgumentParser
import Canopy
import CanopyCore

/// What `set` and `update` take: the location, the value and where the database is. The value
/// is checked and turned into `build`'s write before anything is touched, then applied to the
/// local database (created if needed) or sent to the server as is.
struct ValueWrite: ParsableArguments {
    @Argument(help: "The location, for example users/ada.")
    var path: String

    @OptionGroup var value: ValueInput
    @OptionGroup var connection: ConnectionOptions

    func apply(
        send: (ServerURL, DatabasePath, [UInt8]) async throws(CLIError) -> Void, build: ([UInt8], DatabasePath) throws -> WriteOperation
    ) async throws {
        let path = try parsePath(self.path)
        let bytes = try self.value.bytes()
        let write = try build(bytes, path)
        switch try self.connection.target {
        case .local(let directory):
            try await LocalDatabase.apply(write, in: directory, create: true)
        case .remote(let server):
            try await send(server, path, bytes)
        }
    }
}
