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
            dependencies: ["CLibCrypto", "CLibArchive"]
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
