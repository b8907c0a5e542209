import CanopyConnection
import CanopyCore
import Testing

@Suite("Database URLs")
struct DatabaseURLTests {
    @Test("host, port, TLS and namespace of every accepted form")
    func accepted() throws {
        let local = try DatabaseURL("http://127.0.0.1:9000?ns=blog")
        #expect(local == DatabaseURL(host: "127.0.0.1", port: 9000, isSecure: false, namespace: "blog"))
        #expect(local.webSocketURL() == "ws://127.0.0.1:9000/.ws?v=5&ns=blog")
        #expect(local.webSocketURL(lastSession: "sess-1") == "ws://127.0.0.1:9000/.ws?v=5&ns=blog&ls=sess-1")

        let firebase = try DatabaseURL("https://My-Proj-default-rtdb.firebaseio.com/")
        #expect(
            firebase
                == DatabaseURL(host: "my-proj-default-rtdb.firebaseio.com", port: 443, isSecure: true, namespace: "my-proj-default-rtdb"))
        #expect(firebase.webSocketURL() == "wss://my-proj-default-rtdb.firebaseio.com:443/.ws?v=5&ns=my-proj-default-rtdb")

        let region = try DatabaseURL("https://proj-1.europe-west1.firebasedatabase.app")
        #expect(region.namespace == "proj-1" && region.isSecure && region.port == 443)
        #expect(
            try DatabaseURL("ws://localhost:8080/.ws?v=5&ns=a_b")
                == DatabaseURL(host: "localhost", port: 8080, isSecure: false, namespace: "a_b"))
        #expect(
            try DatabaseURL("wss://db.example.com?ns=prod")
                == DatabaseURL(host: "db.example.com", port: 443, isSecure: true, namespace: "prod"))
        #expect(
            try DatabaseURL("http://example.com?x=1&ns=n") == DatabaseURL(host: "example.com", port: 80, isSecure: false, namespace: "n"))
        // `ns` wins over the host's label.
        #expect(try DatabaseURL("https://a.firebaseio.com?ns=b").namespace == "b")
        let v6 = try DatabaseURL("http://[::1]:9000?ns=blog")
        #expect(v6.host == "::1" && v6.port == 9000)
        #expect(v6.webSocketURL() == "ws://[::1]:9000/.ws?v=5&ns=blog")
    }

    @Test(
        "bad URLs name the offending part",
        arguments: [
            ("127.0.0.1:9000?ns=blog", "scheme"),
            ("ftp://host?ns=blog", "\"ftp\""),
            ("http://127.0.0.1:9000", "namespace"),
            ("http://127.0.0.1:99999?ns=blog", "port \"99999\""),
            ("http://127.0.0.1:x?ns=blog", "port \"x\""),
            ("http://:9000?ns=blog", "host"),
            ("http://user@host:9000?ns=blog", "user information"),
            ("http://host:9000/posts?ns=blog", "path \"/posts\""),
            ("http://host:9000?ns=a/b", "namespace \"a/b\""),
            ("http://host:9000?ns=", "namespace \"\""),
            ("http://[::1?ns=blog", "']'"),
        ])
    func rejected(_ url: String, _ detail: String) {
        #expect {
            _ = try DatabaseURL(url)
        } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.code == .invalidOperation && error.message.contains(detail) && error.message.contains(url)
        }
    }
}
