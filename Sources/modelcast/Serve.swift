import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a published directory locally with the headers its hosting files declare.",
            discussion: """
                A local preview of the CDN: only published objects, with their headers, HEAD, \
                Range and ETag, and the release page at /_modelcast/report (as `modelcast report` \
                draws it; .json for its data). It binds to 127.0.0.1 by default; stop it with Ctrl-C.
                Details: docs/cli.md#serve
                """
        )

        @Argument(help: "The published directory.")
        var directory: String

        @Option(help: "Port to listen on (0 picks a free one).")
        var port = 8080

        @Option(help: "Address to bind (loopback only unless you choose otherwise).")
        var host = "127.0.0.1"

        @Option(help: "URL path to serve under (default: the path of the base URL it was published with).")
        var basePath: String?

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, got \(port)") }
            if let basePath, !basePath.isEmpty, !basePath.hasPrefix("/") {
                throw ValidationError("--base-path must start with /, got '\(basePath)'")
            }
        }

        func run() async throws {
            if !["127.0.0.1", "::1", "localhost"].contains(host) {
                printError("warning: serving on \(host), not loopback: this preview server is not hardened for the internet")
            }
            let base = basePath.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
            let server = try PreviewServer(root: directory, host: host, port: port, basePath: base, pages: Self.releasePages(directory), log: { printError($0) })
            let published = server.publishedBaseURL
            try await server.run { url in
                print(url)
                printError("serving \(directory) at \(url) (Ctrl-C to stop)")
                printError("release page: \(Self.origin(of: url))\(Self.reportPath)")
                if let published, published != url {
                    // The manifest's URLs name the production host: verify fetches them here instead.
                    printError("published for \(published): devices fetch its objects there; check this preview with: modelcast verify \(url)/manifest.json --stand-in-for \(published)")
                }
            }
        }
    
        /// Where serve shows the release page (outside any base path: `_modelcast/` is never published).
        static let reportPath = "/_modelcast/report"

        /// The release page of the served directory, made on each request, and its data.
        static func releasePages(_ directory: String) -> [String: GeneratedPage] {
            @Sendable func page() async throws -> ReleasePage {
                try await withSource(.directory(directory), environment: ProcessInfo.processInfo.environment, log: { printError($0) }) { scope in
                    try await ReleasePageReader.read(scope, at: Date())
                }
            }
            return [
                reportPath: GeneratedPage(contentType: "text/html; charset=utf-8") { Data(try await page().document.utf8) },
                reportPath + ".json": GeneratedPage(contentType: "application/json") { Data(try JSONOutput.encode(try await page()).utf8) },
            ]
        }

        /// `http://127.0.0.1:8080` of `http://127.0.0.1:8080/models`.
        static func origin(of url: String) -> String {
            guard let scheme = url.range(of: "://"), let slash = url[scheme.upperBound...].firstIndex(of: "/") else { return url }
            return String(url[..<slash])
        }
    }
}
