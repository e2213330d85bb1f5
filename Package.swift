// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "modelcast",
    // The CLI's server-side dependencies (Hummingbird, async-http-client) set macOS 14;
    // the client package (modelcast-client/) declares what it needs itself: iOS 15 / macOS 12.
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        // ModelCastCore is the CLI's own: its declarations are `package`, seen by the
        // executable and the tests, not a library for others (apps use modelcast-client/).
        .executable(name: "modelcast", targets: ["modelcast"]),
    ],
    dependencies: [
        // ModelCastFormat and ModelCastClient live in their own package (modelcast-client/), which an
        // app adopts without any of the dependencies below.
        .package(path: "modelcast-client"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // zlib: the zip writer's deflate and CRC-32, verify's inflate.
        .systemLibrary(
            name: "CLibZ",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // CRC-64/NVME (S3's CRC64NVME checksum), folded with carry-less multiplication.
        .target(name: "CCRC64"),
        // The content-defined cut's scan (segment indexes), 64 bytes at a time where AVX-512 VBMI is.
        .target(name: "CSegmentCut"),
        .target(
            name: "ModelCastCore",
            dependencies: [
                .product(name: "ModelCastFormat", package: "modelcast-client"), "CLibCrypto", "CLibZ", "CCRC64", "CSegmentCut",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            plugins: ["EmbedTemplates"]
        ),
        .executableTarget(
            name: "modelcast-embed-templates",
            path: "Sources/modelcast-embed-templates"
        ),
        .plugin(
            name: "EmbedTemplates",
            capability: .buildTool(),
            dependencies: ["modelcast-embed-templates"]
        ),
        .executableTarget(
            name: "modelcast",
            dependencies: [
                "ModelCastCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // A small command-line "device" built on ModelCastClient (README: Client library).
        .executableTarget(
            name: "modelcast-device",
            // ModelCastFormat too, by name: the device parses its arguments with the format's
            // own value types and helpers, which ModelCastClient does not re-export to apps.
            dependencies: [
                .product(name: "ModelCastClient", package: "modelcast-client"),
                .product(name: "ModelCastFormat", package: "modelcast-client"),
            ],
            path: "examples/device"
        ),
        // The README's client snippet, built as an app would (README: Client library).
        .executableTarget(
            name: "modelcast-app-example",
            dependencies: [.product(name: "ModelCastClient", package: "modelcast-client")],
            path: "examples/app"
        ),
        .target(
            name: "ModelCastTestSupport",
            dependencies: ["ModelCastCore"],
            path: "Tests/ModelCastTestSupport"
        ),
        .testTarget(
            name: "ModelCastCoreTests",
            dependencies: ["ModelCastCore", "ModelCastTestSupport"],
            exclude: ["SigV4Vectors", "Golden"]
        ),
        .testTarget(
            name: "ModelCastEndToEndTests",
            dependencies: ["ModelCastCore", "ModelCastTestSupport", .product(name: "Yams", package: "Yams")],
            exclude: ["Golden"]
        ),
        .testTarget(
            name: "ModelCastClientTests",
            dependencies: [.product(name: "ModelCastClient", package: "modelcast-client"), "ModelCastCore", "ModelCastTestSupport"]
        ),
    ]
)
