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
        } catch let error as DatabaseError {
            throw .badRequest("\(Self.invalidJSON) \(error.message)")
        } catch {
            throw .badRequest("\(Self.invalidJSON) \(error)")
        }
    }

    /// A priority body (`PUT /x/.priority.json`).
    static func priority(_ body: [UInt8]) throws(RESTError) -> ValueConverter.PriorityArgument {
        let json = try self.json(body)
        do throws(DatabaseError) {
            return try ValueConverter.priority(json, function: "setPriority")
        } catch {
            throw RESTError(error)
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
        do {
            return try UpdateEntries.entries(members, location: location, function: "update")
        } catch {
            throw RESTError(error)
        }
    }
}
