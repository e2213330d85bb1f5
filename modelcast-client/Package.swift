// swift-tools-version:5.9
import PackageDescription

// The app side of modelcast, as a package of its own: what an app adds (by path, or by the
// URL of a repository that holds this folder at its root) to check, download, prove and
// install models. It depends on swift-crypto and ZIPFoundation only (and, on Linux, on the
// system's libcurl); none of the CLI's server-side packages (Hummingbird, SwiftNIO,
// async-http-client) are resolved or built.
let package = Package(
    name: "modelcast-client",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        // What server and client must agree on: manifest types and the values they may
        // hold, the minisign format and its prehash, the rollout rule, version order.
        .library(name: "ModelCastFormat", targets: ["ModelCastFormat"]),
        // Check, download (resumable), prove and install models atomically.
        .library(name: "ModelCastClient", targets: ["ModelCastClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.19"),
    ],
    targets: [
        .target(name: "ModelCastFormat"),
        // libcurl's easy interface, the client's HTTP transport on Linux (HTTPStream): there
        // Foundation's URLSession hands the body over without back-pressure and cannot stop
        // one that keeps arriving. Apple platforms use URLSession and neither build nor link it.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(
            name: "ModelCastClient",
            dependencies: [
                "ModelCastFormat",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .target(name: "CCurl", condition: .when(platforms: [.linux])),
            ]
        ),
        // The package's own tests: they need nothing outside this folder (nginx on the
        // machine for the transfer tests), so they run in the exported repository too.
        .testTarget(
            name: "ModelCastClientStandaloneTests",
            dependencies: ["ModelCastClient", "ModelCastFormat", .product(name: "Crypto", package: "swift-crypto")]
        ),
    ]
)
