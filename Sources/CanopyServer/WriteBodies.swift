import CanopyCore

/// Request bodies turned into validated writes (Firebase's rules and messages).
enum WriteBodies {
    static let invalidJSON = "Invalid data; couldn't parse JSON object, array, or value."

    /// A PUT or POST body: the value to write at `location`.
    static func value(_ body: [UInt8], location: [ChildKey], function: String) throws(RESTError) -> WriteValue {
        guard !body.isEmpty else { throw .badRequest(Self.invalidJSON) }
        let result: Result<WriteValue, DatabaseError> = body.withUnsafeBytes { bytes in
            do throws(DatabaseError) {
                return .success(try NodeImporter.writeValue(fromJSON: bytes, location: location, function: function))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw Self.error(error)
        }
    }

    static func error(_ error: DatabaseError) -> RESTError {
        if error.code == .invalidJSON { return .badRequest("\(Self.invalidJSON) \(error.message)") }
        return RESTError(error)
    }

    static func json(_ body: [UInt8]) throws(RESTError) -> JSONValue {
        guard !body.isEmpty else { throw .badRequest(Self.invalidJSON) }
        do {
            var builder = JSONValueBuilder()
            return try JSONParser().parse(body, into: &builder)
        } catch {
            throw .badRequest("\(Self.invalidJSON) \(error)")
        }
    }

    /// A priority body (`PUT /x/.priority.json`).
    static func priority(_ body: [UInt8]) throws(RESTError) -> ValueConverter.PriorityArgument {
        do {
            return try ValueConverter.priority(try self.json(body), function: "setPriority")
        } catch let error as DatabaseError {
            throw RESTError(error)
        } catch {
            throw error as! RESTError
        }
    }

    /// A PATCH body: one entry per member (keys may be `a/b` paths; `null` deletes). `nil` for a
    /// `null` body, which removes the location.
    static func update(_ body: [UInt8], location: [ChildKey]) throws(RESTError) -> [WriteOperation.Entry]? {
        let json = try self.json(body)
        if json.isNull { return nil }
        guard case .object(let members) = json else {
            throw .badRequest("Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
        }
        var entries: [WriteOperation.Entry] = []
        entries.reserveCapacity(members.count)
        var needsOverlapCheck = false
        // Sorted, so that a body with several problems always reports the same one.
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            let segments = key.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
            if segments.isEmpty { throw .badRequest("Invalid data: update key \"\(key)\" is an empty path.") }
            for (i, segment) in segments.enumerated() where !KeyValidation.isValidKey(segment) && !(i == segments.count - 1 && segment == ".priority") {
                throw .badRequest("Invalid data: update key \"\(key)\" contains an invalid key (\(segment)). Keys must be non-empty strings and can't contain \".\", \"#\", \"$\", \"/\", \"[\", or \"]\".")
            }
            if segments.count > 1 { needsOverlapCheck = true }
            let relative = segments.map { ChildKey($0) }
            let write: WriteValue
            do {
                if segments.last == ".priority" {
                    switch try ValueConverter.priority(value, function: "update") {
                    case .none: write = WriteValue(node: .empty)
                    case .value(let p): write = WriteValue(node: .leaf(p))
                    case .serverValue(let sv): write = WriteValue(node: .leaf(.int(0)), placeholders: [.init(path: [], value: sv, isPriority: false)])
                    }
                } else {
                    write = try ValueConverter.writeValue(value, at: location + relative, function: "update", argument: "values")
                }
            } catch {
                throw RESTError(error)
            }
            entries.append(WriteOperation.Entry(path: relative, value: write))
        }
        if needsOverlapCheck {
            let paths = entries.map { DatabasePath($0.path) }.sorted()
            for i in paths.indices.dropFirst() where paths[i - 1].contains(paths[i]) {
                throw .badRequest("Invalid data: update contains a path \(paths[i - 1].string) that is an ancestor of another path \(paths[i].string).")
            }
        }
        return entries
    }
}
