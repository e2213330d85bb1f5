// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "modelcast",
    // The CLI's server-side dependencies (Hummingbird, async-http-client) set macOS 14;
    // ModelCastClient itself uses nothing newer than iOS 15 / macOS 12 (README: Client library).
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .executable(name: "modelcast", targets: ["modelcast"]),
        .library(name: "ModelCastCore", targets: ["ModelCastCore"]),
        .library(name: "ModelCastFormat", targets: ["ModelCastFormat"]),
        // The app side: check, download, prove, install. Foundation, swift-crypto and
        // ZIPFoundation only; none of the server-side dependencies.
        .library(name: "ModelCastClient", targets: ["ModelCastClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.19"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CLibArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        // What the server and the client must agree on: manifest types, the minisign
        // format and its prehash, the rollout rule, version order. No dependencies.
        .target(name: "ModelCastFormat"),
        .target(
            name: "ModelCastCore",
            dependencies: [
                "ModelCastFormat", "CLibCrypto", "CLibArchive",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
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
        .target(
            name: "ModelCastClient",
            dependencies: [
                "ModelCastFormat",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        // A small command-line "device" built on ModelCastClient (README: Client library).
        .executableTarget(
            name: "modelcast-device",
            dependencies: ["ModelCastClient"],
            path: "examples/device"
        ),
        .target(
            name: "ModelCastTestSupport",
            dependencies: ["ModelCastCore"],
            path: "Tests/ModelCastTestSupport"
        ),
        .testTarget(
            name: "ModelCastCoreTests",
            dependencies: ["ModelCastCore", "ModelCastTestSupport"],
            exclude: ["SigV4Vectors"]
        ),
        .testTarget(
            name: "ModelCastEndToEndTests",
            dependencies: ["ModelCastCore", "ModelCastTestSupport", .product(name: "Yams", package: "Yams")],
            exclude: ["Golden"]
        ),
        .testTarget(
            name: "ModelCastClientTests",
            dependencies: ["ModelCastClient", "ModelCastCore", "ModelCastTestSupport"]
        ),
    ]
)
