import Foundation
import ModelCastCore
import ModelCastTestSupport
import XCTest

/// The release page in a real browser (issue 32): headless Chromium from Debian's
/// packages opens the page of `ReleasePageTarget` from `file://`, the test reads the
/// rendered text back from the DOM and saves a screenshot as a test artifact
/// (`.build/test-artifacts/release-page.png`, or `$MODELCAST_TEST_ARTIFACTS`). With
/// MODELCAST_UPDATE_SCREENSHOT=1 it also rewrites `docs/images/release-page.png`, the
/// picture docs/report.md and the README show.
final class ReleasePageBrowserTests: XCTestCase {
    func testChromiumRendersThePageWithHostileValuesAsText() throws {
        let chromium = try XCTUnwrap(which("chromium") ?? which("chromium-browser"), "Chromium is missing: scripts/setup installs it (Debian package chromium)")
        let work = try Scratch("modelcast-browser")
        try ReleasePageTarget.make(in: work)
        let made = try modelcast(["report", "site", "--at", ReleasePageTests.at, "--verify", "--allow-http", "--public-key", ReleasePageTarget.publicKey,
                                  "-o", "page.html"], cwd: work.path)
        XCTAssertEqual(made.status, 1, "the hostile channel fails verify: \(made.stderr)")
        let page = URL(fileURLWithPath: work.at("page.html")).absoluteString
        let started = Date()

        // The DOM as Chromium built it from the file (no network: the page needs none).
        let dom = try browser(chromium, ["--dump-dom", page], work)
        let ids = ["stable-live", "stable-signature", "stable-rollout", "stable-history", "stable-verify", "beta-live", "evil-live"]
        let rendered = try renderedText(dom, ids: ids)
        XCTAssertEqual(rendered.elements["script", default: 0], 0, "a script element in the rendered page")
        XCTAssertEqual(rendered.elements["img", default: 0], 0, "an img element in the rendered page")
        XCTAssertEqual(rendered.elements["section"], 3, "one section per channel")
        let text = rendered.text
        func shows(_ id: String, _ expected: [String], file: StaticString = #filePath, line: UInt = #line) {
            for piece in expected {
                XCTAssertTrue(text[id, default: ""].contains(piece), "#\(id) does not show \(piece): \(text[id, default: "(missing)"])", file: file, line: line)
            }
        }
        shows("stable-live", ["sequence 5", "detector", "3.0.0", "12 bytes", "detector.bin"])
        shows("stable-signature", ["signed", ReleasePageTarget.keyID, "Signs sequence 5", "2027-10-31 14:13 UTC", "398 days left", "verify: pass"])
        shows("stable-rollout", ["0%", "halted", "sequence 5 (detector 3.0.0)", "sequence 3 (detector 1.0.0)",
                                 "5% from 2026-09-24 14:13 UTC", "25% from 2026-09-25 14:13 UTC", "0% from 2026-09-26 14:13 UTC",
                                 "Schedule: 5% at 2026-09-24 14:13 UTC, 25% at 2026-09-25 14:13 UTC, 50% at 2026-09-27 14:13 UTC, 100% at 2026-10-01 14:13 UTC",
                                 "now · 0%"])
        shows("stable-history", ["Rollout halted", "rollout halted: every device on sequence 3", "Rolled back", "rolled back to sequence 1 (detector 1.0.0)",
                                 "detector 2.0.0 → 1.0.0", "Rollout", "rollout started at 5% on a schedule"])
        shows("stable-verify", ["passed", "artifact.sha256", "manifest.signature"])
        // Markup from the target is text on the screen, not elements.
        shows("beta-live", ["description: " + ReleasePageTarget.hostileMeta, "notes: red \\u{1B}[31m text"])
        XCTAssertTrue(text["evil-notes", default: ""].contains("'\(ReleasePageTarget.hostileName)' is not a model name"), text["evil-notes", default: "(missing)"])

        // The screenshot: the first screenful, as a reader sees it.
        let artifacts = ProcessInfo.processInfo.environment["MODELCAST_TEST_ARTIFACTS"] ?? repositoryRoot + "/.build/test-artifacts"
        try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
        let screenshot = artifacts + "/release-page.png"
        try? FileManager.default.removeItem(atPath: screenshot)
        _ = try browser(chromium, ["--screenshot=\(screenshot)", "--window-size=1280,1500", "--hide-scrollbars", page], work)
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "not a PNG")
        let size = png.count >= 24 ? (png[16..<20].reduce(0) { $0 << 8 | Int($1) }, png[20..<24].reduce(0) { $0 << 8 | Int($1) }) : (0, 0)
        XCTAssertEqual(size.0, 1280)
        XCTAssertEqual(size.1, 1500)
        XCTAssertGreaterThan(png.count, 50_000, "a nearly empty screenshot")
        print("release page screenshot: \(screenshot) (\(png.count) bytes); the browser part took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        if ProcessInfo.processInfo.environment["MODELCAST_UPDATE_SCREENSHOT"] == "1" {
            let committed = repositoryRoot + "/docs/images/release-page.png"
            try? FileManager.default.removeItem(atPath: committed)
            try FileManager.default.copyItem(atPath: screenshot, toPath: committed)
            print("rewrote \(committed)")
        }
    }

    /// Issue 47: names wrapped mid-word ("Classifie/r") in narrow cells. At a phone's and a
    /// desktop's width, no word of letters and digits (4 to 24 of them; hashes and URLs may
    /// break where they must) is split over two lines. A copy of the page gets a script that
    /// measures each word's line boxes and leaves the broken ones in an attribute.
    func testNamesWrapOnlyBetweenWords() throws {
        let chromium = try XCTUnwrap(which("chromium") ?? which("chromium-browser"), "Chromium is missing: scripts/setup installs it (Debian package chromium)")
        let work = try Scratch("modelcast-browser-wrap")
        try work.write("a.bin", Array("model one\n".utf8))
        try work.write("b.bin", Array("model two\n".utf8))
        try work.write("c.bin", Array("speech one\n".utf8))
        let environment = pinnedEnvironment(epoch: 1_790_000_000)
        let base = "https://cdn.example.com/models"
        for arguments in [["publish", "TinyClassifier=a.bin", "SpeechRecognizerLarge=c.bin", "--version", "1.0.0", "--base-url", base, "--to", "site"],
                          ["publish", "TinyClassifier=b.bin", "SpeechRecognizerLarge=c.bin", "--version", "1.1.0", "--base-url", base, "--to", "site", "--rollout", "10%"],
                          ["rollout", "site", "--percent", "50%"]] {
            let result = try modelcast(arguments, cwd: work.path, environment: environment)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        }
        let made = try modelcast(["report", "site", "--at", "2026-09-22T14:00:00Z", "-o", "page.html"], cwd: work.path)
        XCTAssertEqual(made.status, 0, made.stderr)
        let measure = """
            <script>
            const broken = [];
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
              const node = walker.currentNode;
              if (node.parentElement.closest('.hash, svg')) continue;
              const words = /[A-Za-z0-9]+/g;
              let match;
              while ((match = words.exec(node.data))) {
                const word = match[0];
                if (word.length < 4 || word.length > 24) continue;
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + word.length);
                const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
                if (tops.size > 1) broken.push(word);
              }
            }
            document.body.setAttribute('data-broken', JSON.stringify(broken));
            </script>
            """
        let html = try String(contentsOfFile: work.at("page.html"), encoding: .utf8)
        try html.replacingOccurrences(of: "</body>", with: measure + "</body>").write(toFile: work.at("measured.html"), atomically: true, encoding: .utf8)
        let page = URL(fileURLWithPath: work.at("measured.html")).absoluteString
        for width in [390, 1280] {
            let dom = try browser(chromium, ["--window-size=\(width),2000", "--dump-dom", page], work)
            let attribute = dom.components(separatedBy: "data-broken=\"").dropFirst().first?.components(separatedBy: "\"").first
            let broken = try XCTUnwrap(attribute, "the measuring script did not run at \(width) px").replacingOccurrences(of: "&quot;", with: "\"")
            XCTAssertEqual(broken, "[]", "words split over two lines at \(width) px: \(broken)")
        }
    }

    /// Runs headless Chromium (as root it needs --no-sandbox; a container's small /dev/shm
    /// is avoided), with a profile of its own, at most 90 s; returns what it printed on
    /// standard output.
    private func browser(_ chromium: String, _ arguments: [String], _ work: Scratch) throws -> String {
        let result = try runProcess("/usr/bin/timeout", ["90", chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                                                         "--user-data-dir=" + work.at("chromium-profile"), "--force-device-scale-factor=1"] + arguments)
        XCTAssertEqual(result.status, 0, "chromium \(arguments.joined(separator: " ")): \(result.stderr.suffix(2000))")
        return result.stdout
    }

    /// The text content of each element with one of `ids` (whitespace collapsed), the
    /// notes of each section (`NAME-notes`), and how many elements of each kind the DOM has.
    private func renderedText(_ dom: String, ids: [String]) throws -> (text: [String: String], elements: [String: Int]) {
        let script = """
            import json, sys
            from html.parser import HTMLParser
            ids = set(json.loads(sys.argv[1]))
            class Reader(HTMLParser):
                def __init__(self):
                    super().__init__(convert_charrefs=True)
                    self.stack, self.text, self.count, self.section = [], {}, {}, None
                def handle_starttag(self, tag, attrs):
                    attrs = dict(attrs)
                    self.count[tag] = self.count.get(tag, 0) + 1
                    if tag == "section": self.section = (attrs.get("id") or "").removeprefix("channel-")
                    key = attrs.get("id") if attrs.get("id") in ids else None
                    if tag == "p" and "note" in (attrs.get("class") or "").split(): key = f"{self.section}-notes"
                    if tag in ("br", "meta", "link", "img", "input", "circle", "line", "path"): return
                    self.stack.append(key)
                def handle_endtag(self, tag):
                    if tag in ("br", "meta", "link", "img", "input", "circle", "line", "path"): return
                    if self.stack: self.stack.pop()
                def handle_data(self, data):
                    for key in set(k for k in self.stack if k):
                        self.text[key] = self.text.get(key, "") + data + " "
            reader = Reader()
            reader.feed(sys.stdin.read())
            print(json.dumps({"text": {k: " ".join(v.split()) for k, v in reader.text.items()}, "elements": reader.count}))
            """
        let idsJSON = String(decoding: try JSONSerialization.data(withJSONObject: ids), as: UTF8.self)
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script, idsJSON], stdin: dom)
        XCTAssertEqual(result.status, 0, result.stderr)
        struct Rendered: Decodable { let text: [String: String]; let elements: [String: Int] }
        let rendered = try JSONDecoder().decode(Rendered.self, from: Data(result.stdout.utf8))
        return (rendered.text, rendered.elements)
    }
}
