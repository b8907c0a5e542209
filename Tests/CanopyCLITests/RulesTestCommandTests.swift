import CanopyTestSupport
import Foundation
import Testing

/// `canopy rules test`: offline verdicts, the deciding rule, exit statuses (0 allowed, 1 denied,
/// 64 bad input).
@Suite(.serialized)
struct RulesTestCommandTests {
    static let rules = """
        {
          "rules": {
            "users": {
              "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth.uid == $uid && auth.token.email_verified == true",
                ".validate": "newData.hasChildren(['name'])"
              }
            },
            "posts": {
              ".read": "query.orderByChild == 'owner' && query.equalTo == auth.uid",
              "$post": { ".write": "auth != null", "at": { ".validate": "newData.val() == now" } }
            },
            "public": { ".read": "root.child('open').val() == true" }
          }
        }
        """

    let dir = TemporaryDirectory()

    func test(_ arguments: [String], rules: String = Self.rules) throws -> RunResult {
        let file = self.dir.file("database.rules.json")
        try Data(rules.utf8).write(to: URL(fileURLWithPath: file))
        return try canopy(["rules", "test", "--rules", file] + arguments)
    }

    @Test func readsAllowedAndDenied() throws {
        var r = try self.test(["--read", "users/alice", "--uid", "alice"])
        #expect(r.status == 0, "\(r)")
        #expect(
            r.output == """
                ALLOWED read /users/alice
                rule: /users/$uid/.read (line 5, column 18) at /users/alice: auth != null && auth.uid == $uid
                """, "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")

        r = try self.test(["--read", "users/alice", "--uid", "bob"])
        #expect(r.status == 1, "\(r)")
        #expect(r.output == "DENIED read /users/alice\nrule: none (No .read rule allowed the read of /users/alice)", "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")

        // Signed out: auth == null, and the rule's error-free false is in the trace.
        r = try self.test(["--read", "users/alice", "--trace"])
        #expect(r.status == 1, "\(r)")
        #expect(
            r.output == """
                DENIED read /users/alice
                rule: none (No .read rule allowed the read of /users/alice)
                trace:
                  false /users/$uid/.read (line 5, column 18) at /users/alice: auth != null && auth.uid == $uid
                """, "\(r)")

        // The data it is judged against: --root.
        r = try self.test(["--read", "public"])
        #expect(r.status == 1, "\(r)")
        r = try self.test(["--read", "public/x", "--root", #"{"open": true}"#])
        #expect(r.status == 0, "\(r)")
        #expect(r.output.hasSuffix("rule: /public/.read (line 14, column 26) at /public: root.child('open').val() == true"), "\(r)")
        try Data(#"{"open": false}"#.utf8).write(to: URL(fileURLWithPath: self.dir.file("root.json")))
        r = try self.test(["--read", "public", "--root-file", self.dir.file("root.json")])
        #expect(r.status == 1, "\(r)")
    }

    @Test func queryReads() throws {
        var r = try self.test(["--read", "posts", "--order-by-child", "owner", "--equal-to", #""alice""#, "--uid", "alice"])
        #expect(r.status == 0, "\(r)")
        #expect(r.output.hasPrefix("ALLOWED read /posts\nrule: /posts/.read (line 11, column 16) at /posts: "), "\(r)")
        r = try self.test(["--read", "posts", "--order-by-child", "owner", "--equal-to", #""bob""#, "--uid", "alice"])
        #expect(r.status == 1, "\(r)")
        r = try self.test(["--read", "posts", "--uid", "alice"])
        #expect(r.status == 1, "\(r)")
    }

    @Test func writesWithClaimsValidationAndServerValues() throws {
        let verified = #"{"sub": "alice", "email": "alice@example.com", "email_verified": true}"#
        var r = try self.test(["--write", "users/alice", "--data", #"{"name": "Alice"}"#, "--auth", verified])
        #expect(r.status == 0, "\(r)")
        #expect(
            r.output == """
                ALLOWED write /users/alice
                rule: /users/$uid/.write (line 6, column 19) at /users/alice: auth.uid == $uid && auth.token.email_verified == true
                """, "\(r)")
        // --uid carries no email_verified claim.
        r = try self.test(["--write", "users/alice", "--data", #"{"name": "Alice"}"#, "--uid", "alice"])
        #expect(r.status == 1, "\(r)")
        #expect(r.output.hasPrefix("DENIED write /users/alice\nrule: none (No .write rule allowed the write to /users/alice)"), "\(r)")
        // Granted, then refused by .validate, which is the deciding rule.
        r = try self.test(["--write", "users/alice", "--data", #"{"nick": "al"}"#, "--auth", verified, "--trace"])
        #expect(r.status == 1, "\(r)")
        #expect(
            r.output == """
                DENIED write /users/alice
                rule: /users/$uid/.validate (line 7, column 22) at /users/alice: newData.hasChildren(['name'])
                trace:
                  true  /users/$uid/.write (line 6, column 19) at /users/alice: auth.uid == $uid && auth.token.email_verified == true
                  false /users/$uid/.validate (line 7, column 22) at /users/alice: newData.hasChildren(['name'])
                """, "\(r)")
        // A delete is not validated.
        r = try self.test(["--write", "users/alice", "--data", "null", "--auth", verified])
        #expect(r.status == 0, "\(r)")

        // Server values become --now.
        r = try self.test(["--write", "posts/p1", "--data", #"{"at": {".sv": "timestamp"}}"#, "--uid", "alice", "--now", "1000"])
        #expect(r.status == 0, "\(r)")
        r = try self.test(["--write", "posts/p1", "--data", #"{"at": 999}"#, "--uid", "alice", "--now", "1000"])
        #expect(r.status == 1, "\(r)")
        #expect(r.output.contains("rule: /posts/$post/at/.validate (line 12, column 65) at /posts/p1/at: newData.val() == now"), "\(r)")
        try Data(#"{"at": 1000}"#.utf8).write(to: URL(fileURLWithPath: self.dir.file("post.json")))
        r = try self.test(["--write", "posts/p1", "--data-file", self.dir.file("post.json"), "--uid", "alice", "--now", "1000"])
        #expect(r.status == 0, "\(r)")
    }

    /// A priority in an update is judged as the server judges it: as a change of the node that
    /// gets it, whose new data carries the priority.
    @Test func aPriorityInAnUpdateIsJudgedAsTheServerJudgesIt() throws {
        let rules = #"{"rules": {".read": true, "items": {"$id": {".write": true, ".validate": "newData.getPriority() == 5"}}}}"#
        let root = ["--root", #"{"items": {"a": 1}}"#]
        var r = try self.test(["--update", "/", "--data", #"{"items/a/.priority": 5}"#] + root, rules: rules)
        #expect(r.status == 0, "\(r)")
        #expect(r.output.hasPrefix("ALLOWED update / (/items/a)"), "\(r)")
        r = try self.test(["--update", "/", "--data", #"{"items/a/.priority": 4}"#] + root, rules: rules)
        #expect(r.status == 1, "\(r)")
        #expect(r.output.hasPrefix("DENIED update / (/items/a)"), "\(r)")
        #expect(r.output.contains("newData.getPriority() == 5"), "\(r)")
    }

    @Test func multiPathUpdateSeenByNewDataParent() throws {
        let city = #""cities/lyon": {"name": "Lyon", "country": "fr"}"#
        var r = try self.test(
            ["--update", "/", "--data", #"{\#(city), "countries/fr/last_updated": {".sv": "timestamp"}}"#, "--uid", "alice"],
            rules: SeedExample.rules)
        #expect(r.status == 0, "\(r)")
        #expect(
            r.output == """
                ALLOWED update / (/cities/lyon, /countries/fr/last_updated)
                rule: /cities/$id/.write (line 6, column 19) at /cities/lyon: auth != null
                """, "\(r)")

        // The city alone (as an update, or a set) fails the city's .validate.
        for arguments in [
            ["--update", "/", "--data", "{\(city)}"], ["--write", "cities/lyon", "--data", #"{"name": "Lyon", "country": "fr"}"#],
        ] {
            r = try self.test(
                arguments + ["--uid", "alice", "--root", #"{"countries": {"fr": {"last_updated": 1}}}"#], rules: SeedExample.rules)
            #expect(r.status == 1, "\(r)")
            #expect(
                r.output.hasSuffix(
                    "rule: /cities/$id/.validate (line 8, column 22) at /cities/lyon: newData.hasChildren(['name', 'country']) && newData.parent().parent().child('countries/' + newData.child('country').val() + '/last_updated').val() == now"
                ), "\(r)")
        }

        // A stamp that is not now.
        r = try self.test(
            [
                "--update", "/", "--data", #"{\#(city), "countries/fr/last_updated": 1732000000000}"#, "--uid", "alice", "--now",
                "1732000000001",
            ],
            rules: SeedExample.rules)
        #expect(r.status == 1, "\(r)")
        r = try self.test(
            [
                "--update", "/", "--data", #"{\#(city), "countries/fr/last_updated": 1732000000000}"#, "--uid", "alice", "--now",
                "1732000000000",
            ],
            rules: SeedExample.rules)
        #expect(r.status == 0, "\(r)")
        // Signed out.
        r = try self.test(
            ["--update", "/", "--data", #"{\#(city), "countries/fr/last_updated": {".sv": "timestamp"}}"#], rules: SeedExample.rules)
        #expect(r.status == 1, "\(r)")
    }

    struct BadInput: CustomStringConvertible {
        var arguments: [String]
        var rules: String = RulesTestCommandTests.rules
        /// The whole stderr line after `canopy: `; `<rules>` stands for the rules file's path.
        var message: String
        var description: String { self.arguments.joined(separator: " ") }
    }

    static let badInputs: [BadInput] = [
        BadInput(
            arguments: ["--read", "/"], rules: "{\n  \"rules\": {\n    \".read\": \"skies === 'blue'\"\n  }\n}",
            message: "<rules>:3:15: Unknown variable 'skies' in .read at /: skies === 'blue'"),
        BadInput(
            arguments: ["--read", "/"], rules: "{\"rules\": {\"a\": {\".write\": \"newData.val() ==\n    $id\"}}}",
            message: "<rules>:2:5: Unknown variable '$id': no $id wildcard on this rule's path in .write at /a: newData.val() == $id"),
        BadInput(
            arguments: ["--read", "users/a.b"],
            message: ##"Invalid path "users/a.b": keys must be non-empty and can't contain ".", "#", "$", "[", "]" or control characters."##
        ),
        BadInput(
            arguments: ["--write", "users/alice", "--data", "{"],
            message: #"--data: Invalid JSON at line 1, column 2 (byte 1): unexpected end of input, expected '"' to start an object key"#),
        BadInput(
            arguments: ["--update", "users", "--data", "[1]"],
            message: #"--data: update takes a JSON object of child paths and values, for example {"name": "Ada", "stats/visits": 3}."#),
        BadInput(
            arguments: ["--read", "users", "--root", "{x}"],
            message: #"--root: Invalid JSON at line 1, column 2 (byte 1): expected '"' to start an object key, found character 'x'"#),
        BadInput(
            arguments: ["--read", "users", "--auth", #"{"email": "a@x"}"#],
            message:
                #"--auth takes the token's claims, a JSON object with a non-empty "sub" (the uid), for example {"sub": "alice", "email": "alice@example.com"}."#
        ),
        BadInput(arguments: ["--read", "users", "--write", "users"], message: "Give one of --read PATH, --write PATH and --update PATH."),
        BadInput(arguments: ["--write", "users"], message: "--write and --update need the data written: --data JSON or --data-file FILE."),
        BadInput(
            arguments: ["--read", "users", "--uid", "a", "--auth", #"{"sub": "a"}"#], message: "Give either --auth or --uid, not both."),
        BadInput(arguments: ["--write", "users", "--data", "1", "--limit-to-first", "1"], message: "The query flags go with --read."),
        BadInput(arguments: ["--read", "users", "--limit-to-first", "0"], message: "Limit can't be zero"),
    ]

    @Test(arguments: badInputs)
    func badInput(_ bad: BadInput) throws {
        let r = try self.test(bad.arguments, rules: bad.rules)
        #expect(r.status == 64, "\(r)")
        #expect(r.stdout.isEmpty, "\(r)")
        let expected = "canopy: " + bad.message.replacingOccurrences(of: "<rules>", with: self.dir.file("database.rules.json")) + "\n"
        #expect(r.stderr == expected, "\(r)")
    }
}
