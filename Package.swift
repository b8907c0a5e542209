// swift-tools-version:6.1
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "canopy",
    products: [
        .library(name: "Canopy", targets: ["Canopy"]),
        .executable(name: "canopy-bench", targets: ["canopy-bench"]),
    ],
    targets: [
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .target(name: "CanopyLoop", dependencies: ["CLibUV"], swiftSettings: settings),
        .target(name: "CanopyCore", swiftSettings: settings),
        .target(name: "CanopyStorage", dependencies: ["CanopyCore", "CanopyLoop"], swiftSettings: settings),
        .target(name: "Canopy", dependencies: ["CanopyCore", "CanopyLoop", "CanopyStorage"], swiftSettings: settings),
        .executableTarget(name: "canopy-bench", dependencies: ["Canopy", "CanopyCore"], swiftSettings: settings),
        .executableTarget(name: "QuickStart", dependencies: ["Canopy"], path: "Samples/QuickStart"),
        .target(name: "CanopyTestSupport", path: "Tests/CanopyTestSupport", swiftSettings: settings),
        .testTarget(name: "CanopyCoreTests", dependencies: ["CanopyCore", "CanopyTestSupport"], swiftSettings: settings),
        .testTarget(name: "CanopyStorageTests", dependencies: ["CanopyStorage", "CanopyCore", "CanopyTestSupport"], swiftSettings: settings),
        .testTarget(name: "CanopyLoopTests", dependencies: ["CanopyLoop"], swiftSettings: settings),
        .testTarget(name: "CanopyTests", dependencies: ["Canopy", "CanopyCore", "CanopyLoop", "CanopyStorage", "CanopyTestSupport"], resources: [.copy("Fixtures")], swiftSettings: settings),
    ]
)
