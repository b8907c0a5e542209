import CanopyCore
import Testing

@testable import CanopyConnection

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

extension DatabaseURLTests {
    @Test("a reset's host[:port] names the same database elsewhere: same namespace and TLS, the scheme's port by default")
    func redirected() throws {
        let url = try DatabaseURL("https://proj.firebaseio.com")
        #expect(
            try url.redirected(to: "s-usc1c-nss-203.firebaseio.com")
                == DatabaseURL(host: "s-usc1c-nss-203.firebaseio.com", port: 443, isSecure: true, namespace: "proj"))
        let local = try DatabaseURL("http://127.0.0.1:9000?ns=blog")
        #expect(
            try local.redirected(to: "127.0.0.1:9141") == DatabaseURL(host: "127.0.0.1", port: 9141, isSecure: false, namespace: "blog"))
        #expect(try local.redirected(to: "[::1]:9001") == DatabaseURL(host: "::1", port: 9001, isSecure: false, namespace: "blog"))
    }

    @Test(
        "a reset's bad host is refused, naming the fault",
        arguments: [
            ("", "is not valid"), ("ws://h:1", "without a scheme or path"), ("h:1/x", "without a scheme or path"),
            ("h:99999", "not a number from 1 to 65535"), ("u@h:1", "user information"),
        ])
    func badRedirect(_ host: String, _ fault: String) throws {
        let url = try DatabaseURL("http://127.0.0.1:9000?ns=blog")
        #expect {
            _ = try url.redirected(to: host)
        } throws: { error in
            let message = (error as? DatabaseError)?.message ?? ""
            return message.contains("in the server's reset") && message.contains(fault)
        }
    }
}
