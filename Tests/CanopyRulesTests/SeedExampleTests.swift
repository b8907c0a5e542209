import CanopyCore
import CanopyRules
import CanopyTestSupport
import Testing

/// Issue 17's seed example: a city may be written only if the same multi-path update stamps its
/// country's `last_updated` with the server time.
@Suite("Seed example: cities need their country stamped in the same update")
struct SeedExampleTests {
    static let now: Int64 = 1_732_000_000_000
    let engine: RulesEngine
    let alice = AuthContext(uid: "alice")

    init() throws { self.engine = RulesEngine(try RulesDocument(parsing: SeedExample.rules)) }

    func city(_ country: String) -> Node { node(json(#"{"name": "Lyon", "country": "\#(country)"}"#)) }

    /// The verdict on one update, signed in as `auth`, that writes Lyon (in France) and sets
    /// `country`'s `last_updated` to `time`, on an empty database at ``now``.
    func cityWithStamp(country: String = "fr", time: Int64 = Self.now, auth: AuthContext?) -> RuleVerdict {
        self.engine.canWrite(
            changes: [
                .init(path: path("/cities/lyon"), value: self.city("fr")),
                .init(path: path("/countries/\(country)/last_updated"), value: .leaf(.int(time))),
            ], auth: auth, root: .empty, now: Self.now)
    }

    @Test("the city with its country's last_updated set to now in one update is allowed")
    func withStamp() {
        let verdict = self.cityWithStamp(auth: self.alice)
        #expect(verdict.isAllowed, "\(verdict.reason)")
    }

    @Test("the city alone is denied, even when the country was stamped earlier")
    func withoutStamp() {
        let earlier = node(json(#"{"countries": {"fr": {"last_updated": 1}}}"#))
        let verdict = self.engine.canWrite(
            path: path("/cities/lyon"), value: self.city("fr"), auth: self.alice, root: earlier, now: Self.now)
        #expect(!verdict.isAllowed)
        #expect(verdict.decidingRule?.rulePath == "/cities/$id" && verdict.decidingRule?.kind == .validate)
    }

    @Test("stamping another country, or with another time, is denied")
    func wrongStamp() {
        for (country, time) in [("de", Self.now), ("fr", Self.now - 1)] {
            let verdict = self.cityWithStamp(country: country, time: time, auth: self.alice)
            #expect(!verdict.isAllowed, "\(country) \(time)")
        }
    }

    @Test("signed out, nothing is written")
    func signedOut() {
        let verdict = self.cityWithStamp(auth: nil)
        #expect(!verdict.isAllowed)
    }
}
