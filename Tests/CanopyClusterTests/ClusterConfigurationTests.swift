import CanopyCluster
import CanopyCore
import Testing

@Suite struct ClusterConfigurationTests {
    @Test func readsTheURLAndNeverShowsThePassword() throws {
        let configuration = try ClusterConfiguration(url: "postgres://canopy:s3cret@db.internal:6543/rtdb", environment: [:])
        #expect(configuration.host == "db.internal")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "canopy")
        #expect(configuration.password == "s3cret")
        #expect(configuration.database == "rtdb")
        #expect(configuration.description == "postgres://canopy@db.internal:6543/rtdb")
        #expect(!configuration.description.contains("s3cret"))
    }

    @Test func thePasswordComesFromTheFileThenTheURLThenPGPASSWORD() throws {
        let environment = ["PGPASSWORD": "from-env"]
        #expect(
            try ClusterConfiguration(url: "postgresql://u@h/d", password: "from-file", environment: environment).password == "from-file")
        #expect(try ClusterConfiguration(url: "postgres://u:from-url@h/d", environment: environment).password == "from-url")
        #expect(try ClusterConfiguration(url: "postgres://u@h/d", environment: environment).password == "from-env")
        #expect(try ClusterConfiguration(url: "postgres://u@h/d", environment: [:]).password == nil)
        #expect(try ClusterConfiguration(url: "postgres://u@h/d", environment: [:]).port == 5432)
    }

    @Test func readsConnectTimeoutAndADisabledSSLMode() throws {
        #expect(try ClusterConfiguration(url: "postgres://u@h/d", environment: [:]).connectTimeout == .seconds(5))
        let configured = try ClusterConfiguration(url: "postgres://u@h/d?connect_timeout=12&sslmode=disable", environment: [:])
        #expect(configured.connectTimeout == .seconds(12))
        #expect(configured.database == "d" && configured.description == "postgres://u@h:5432/d?connect_timeout=12")
        #expect(try ClusterConfiguration(url: configured.description, environment: [:]).connectTimeout == .seconds(12))
    }

    @Test(arguments: [
        ("mysql://u@h/d", "postgres://USER@HOST:PORT/DATABASE"),
        ("postgres://h:5432/d", "names no user"),
        ("postgres://u@h:5432", "names no database"),
        ("postgres://u@h:5432/", "names no database"),
        ("postgres://u@h:70000/d", "port"),
        ("postgres:///d", "names no host"),
        ("postgres://u@h/d?sslmode=require", "without TLS"),
        ("postgres://u@h/d?sslmode=verify-full", "without TLS"),
        ("postgres://u@h/d?connect_timeout=0", "connect_timeout"),
        ("postgres://u@h/d?connect_timeout=soon", "connect_timeout"),
        ("postgres://u@h/d?application_name=x", "does not know: application_name"),
    ])
    func badURLsNameTheirWrongPart(url: String, expected: String) {
        #expect {
            _ = try ClusterConfiguration(url: url, environment: [:])
        } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.code == .invalidValue && error.message.contains(expected)
        }
    }
}
