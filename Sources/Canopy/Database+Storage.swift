import CanopyCore

extension Database {
    /// Opens (creating it if missing) the durable database kept in the directory at `path`.
    ///
    /// Every acknowledged write survives a crash of the process; with ``SyncPolicy/always`` (the
    /// default) also a power cut. Opening loads the newest checkpoint and replays the journal
    /// after it.
    ///
    /// - Throws: ``DatabaseError`` `.inUse` when another process has the directory open,
    ///   `.corrupted` when a file is damaged (naming the file and the offset), `.ioError` when the
    ///   directory cannot be created or read.
    public convenience init(path: String, _ configuration: Configuration = Configuration()) throws(DatabaseError) {
        try self.init(configuration: configuration, path: path)
    }

    /// Opens (creating it if missing) the durable database kept in the directory at `path`; the
    /// same as ``init(path:_:)``.
    public static func open(at path: String, _ configuration: Configuration = Configuration()) throws(DatabaseError) -> Database {
        try Database(path: path, configuration)
    }
}
