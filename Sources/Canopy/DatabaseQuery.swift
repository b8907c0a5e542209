import CanopyCore

/// A location plus query parameters, to observe or read (Firebase's `DatabaseQuery`).
///
/// ``DatabaseReference`` is the query with no constraints. Building a query never throws: an
/// invalid path or query is reported to the cancel block of observers, to `getData`, and to
/// writes, as a `DatabaseError`.
// @unchecked Sendable: every stored property is an immutable `let` of a Sendable type; the class is
// not final only so that `DatabaseReference` can be a query, as in Firebase.
public class DatabaseQuery: @unchecked Sendable {
    /// The database this query reads.
    public let database: Database
    let path: DatabasePath
    /// The constraints, boxed only when there are any (references have none), which keeps a
    /// reference small.
    private let builderBox: BuilderBox?
    var builder: QueryBuilder { self.builderBox?.value ?? QueryBuilder() }

    private final class BuilderBox: Sendable {
        let value: QueryBuilder
        init(_ value: QueryBuilder) { self.value = value }
    }
    /// An invalid path or query, reported when the query is used.
    let constraintError: DatabaseError?

    init(database: Database, path: DatabasePath, builder: QueryBuilder, error: DatabaseError?) {
        self.database = database
        self.path = path
        self.builderBox = builder == QueryBuilder() ? nil : BuilderBox(builder)
        self.constraintError = error
    }

    /// The plain location of this query.
    public var ref: DatabaseReference {
        DatabaseReference(
            database: self.database, path: self.path, error: self.constraintError.flatMap { $0.code == .invalidPath ? $0 : nil })
    }

    var core: DatabaseCore { self.database.core }

    /// The engine's parameters for this query.
    package var params: QueryParams { self.builder.params }

    var isDefaultQuery: Bool { self.params == .default }
}
