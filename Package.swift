// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "modelcast",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "modelcast", targets: ["modelcast"]),
        .library(name: "ModelCastCore", targets: ["ModelCastCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
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
        .target(
            name: "ModelCastCore",
            dependencies: [
                "CLibCrypto", "CLibArchive",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Mustache", package: "swift-mustache"),
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
            ]
        ),
        .target(
            name: "ModelCastTestSupport",
            dependencies: ["ModelCastCore"],
            path: "Tests/ModelCastTestSupport"
        ),
        .testTarget(
            name: "ModelCastCoreTests",
            dependencies: ["ModelCastCore", "ModelCastTestSupport"]
        ),
        .testTarget(
            name: "ModelCastEndToEndTests",
            dependencies: ["ModelCastCore", "ModelCastTestSupport"]
        ),
    ]
)
