// swift-tools-version:6.1
import PackageDescription

// `CANOPY_LIBFUZZER=1 swift build --product canopy-fuzz` builds the coverage-guided libFuzzer
// binary with AddressSanitizer (Tests/Fuzz/README.md): only our own modules are instrumented, so
// the dependencies' objects of a debug build are reused and libFuzzer's coverage is Canopy's.
let libFuzzer = Context.environment["CANOPY_LIBFUZZER"] == "1"
let fuzzerFlags = ["-sanitize=fuzzer,address"]

let languageSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]
let settings = languageSettings + (libFuzzer ? [.unsafeFlags(fuzzerFlags), .define("CANOPY_LIBFUZZER")] : [])

let package = Package(
    name: "canopy",
    products: [
        .library(name: "Canopy", targets: ["Canopy"]),
        .library(name: "CanopyRemote", targets: ["CanopyRemote"]),
        .executable(name: "canopy-bench", targets: ["canopy-bench"]),
        .library(name: "CanopyServer", targets: ["CanopyServer"]),
        .executable(name: "canopy", targets: ["canopy"]),
    ],
    dependencies: [
        // Without its default traits Hummingbird skips swift-configuration (a shorter build).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `swift package generate-documentation --target Canopy` (CI checks the catalog builds without warnings).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .target(name: "CanopyLoop", dependencies: ["CLibUV", "CanopyCore"], swiftSettings: settings),
        .target(name: "CanopyCore", swiftSettings: settings),
        .target(name: "CanopyRules", dependencies: ["CanopyCore"], swiftSettings: settings),
        .target(
            name: "CanopyStorage", dependencies: ["CanopyCore", .product(name: "Logging", package: "swift-log")], swiftSettings: settings),
        .target(
            name: "CanopyWire", dependencies: ["CanopyCore", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: settings),
        .target(
            name: "CanopyConnection",
            dependencies: [
                "CanopyCore", "CanopyLoop", "CanopyWire", .product(name: "Logging", package: "swift-log"),
                .product(name: "WSClient", package: "swift-websocket"), .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: settings),
        .target(
            name: "Canopy",
            dependencies: ["CanopyCore", "CanopyLoop", "CanopyStorage", .product(name: "Logging", package: "swift-log")],
            swiftSettings: settings),
        // `Database(url:)`, a client of a server: apart from Canopy, so that an app that only embeds
        // it builds and links no NIO, WebSocket or Crypto.
        .target(
            name: "CanopyRemote",
            dependencies: [
                "Canopy", "CanopyCore", "CanopyLoop", "CanopyStorage", "CanopyWire", "CanopyConnection",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
        // Cluster mode's PostgreSQL side (the DocC article "Cluster"): nothing of Canopy depends on it.
        .target(
            name: "CanopyCluster",
            dependencies: [
                "CanopyCore", "CanopyStorage", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: settings),
        .target(
            name: "CanopyServer",
            dependencies: [
                "Canopy", "CanopyCore", "CanopyRules", "CanopyStorage", "CanopyWire", "CanopyConnection", "CanopyCluster",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            exclude: ["Browser/Assets"],
            swiftSettings: settings,
            plugins: ["EmbedBrowserAssets"]
        ),
        // The data browser's HTML, CSS and JavaScript (Sources/CanopyServer/Browser/Assets), embedded
        // in CanopyServer at build time; the tool is built for the build machine, without fuzzer flags.
        .executableTarget(name: "canopy-embed-assets", swiftSettings: languageSettings),
        .plugin(
            name: "EmbedBrowserAssets", capability: .buildTool(), dependencies: ["canopy-embed-assets"], path: "Sources/EmbedBrowserAssets"),
        .executableTarget(
            name: "canopy",
            dependencies: [
                "Canopy", "CanopyCore", "CanopyRules", "CanopyStorage", "CanopyConnection", "CanopyServer", "CanopyCluster",
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "canopy-bench",
            dependencies: [
                "Canopy", "CanopyRemote", "CanopyCore", "CanopyRules", "CanopyServer", "CanopyCluster", "CanopyTestSupport",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(name: "QuickStart", dependencies: ["Canopy"], path: "Samples/QuickStart"),
        .executableTarget(name: "BlogPosts", dependencies: ["CanopyRemote", "CanopyServer"], path: "Samples/BlogPosts"),
        .executableTarget(name: "Restaurants", dependencies: ["Canopy"], path: "Samples/Restaurants"),
        .target(
            name: "CanopyTestSupport", dependencies: ["CanopyStorage", "CanopyLoop"], path: "Tests/CanopyTestSupport",
            swiftSettings: settings),
        .executableTarget(
            name: "canopy-crash-writer", dependencies: ["Canopy", "CanopyTestSupport"], path: "Tests/CrashWriter", swiftSettings: settings),
        .executableTarget(name: "canopy-await-probe", dependencies: ["Canopy"], path: "Tests/AwaitProbe", swiftSettings: settings),
        .target(
            name: "CanopyFuzzTargets",
            dependencies: ["Canopy", "CanopyCore", "CanopyRules", "CanopyStorage", "CanopyServer", "CanopyTestSupport"],
            path: "Tests/FuzzTargets", swiftSettings: settings),
        .executableTarget(
            name: "canopy-fuzz", dependencies: ["CanopyFuzzTargets"], path: "Tests/Fuzz", exclude: ["Corpus", "Regressions", "README.md"],
            swiftSettings: settings, linkerSettings: libFuzzer ? [.unsafeFlags(fuzzerFlags)] : []),
        .testTarget(
            name: "CanopyFuzzTests", dependencies: ["CanopyFuzzTargets", "Canopy", "CanopyCore", "CanopyServer"], swiftSettings: settings),
        .testTarget(name: "CanopyCoreTests", dependencies: ["CanopyCore", "CanopyTestSupport"], swiftSettings: settings),
        .testTarget(
            name: "CanopyRulesTests", dependencies: ["CanopyRules", "CanopyCore", "CanopyTestSupport"], exclude: ["Fixtures"],
            swiftSettings: settings),
        .testTarget(
            name: "CanopyStorageTests", dependencies: ["CanopyStorage", "CanopyCore", "CanopyTestSupport"], swiftSettings: settings),
        .testTarget(name: "CanopyWireTests", dependencies: ["CanopyWire", "CanopyCore", "CanopyTestSupport"], swiftSettings: settings),
        .testTarget(
            name: "CanopyConnectionTests",
            dependencies: [
                "CanopyConnection", "CanopyServer", "Canopy", "CanopyCore", "CanopyWire", "CanopyTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings),
        .testTarget(
            name: "CanopyClusterTests",
            dependencies: [
                "Canopy", "CanopyRemote", "CanopyCluster", "CanopyCore", "CanopyStorage", "CanopyTestSupport", "canopy",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Interop")],
            swiftSettings: settings),
        .testTarget(name: "CanopyLoopTests", dependencies: ["CanopyLoop", "CanopyTestSupport"], swiftSettings: settings),
        .testTarget(
            name: "CanopyServerTests",
            dependencies: [
                "Canopy", "CanopyRemote", "CanopyCore", "CanopyRules", "CanopyServer", "CanopyTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            exclude: ["Fixtures"], resources: [.copy("Interop")],
            swiftSettings: settings
        ),
        .testTarget(
            name: "CanopyCLITests", dependencies: ["canopy", "Canopy", "CanopyStorage", "CanopyCore", "CanopyTestSupport"],
            exclude: ["Snapshots"], swiftSettings: settings),
        .testTarget(
            name: "BlogPostsTests", dependencies: ["BlogPosts", "Canopy", "CanopyRemote", "CanopyServer", "CanopyTestSupport"],
            swiftSettings: settings),
        .testTarget(name: "RestaurantsTests", dependencies: ["Restaurants", "Canopy", "CanopyTestSupport"], swiftSettings: settings),
        .testTarget(
            name: "CanopyTests",
            dependencies: [
                "Canopy", "CanopyRemote", "CanopyCore", "CanopyLoop", "CanopyStorage", "CanopyServer", "CanopyTestSupport",
                "canopy-crash-writer", "canopy-await-probe", "canopy",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")], swiftSettings: settings),
    ]
)
