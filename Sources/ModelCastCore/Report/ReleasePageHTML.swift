import Foundation

extension ReleasePage {
    /// The page as one self-contained HTML document: inline CSS and SVG, no script, no
    /// external font, image or style, so it opens offline and from `file://`. The same
    /// page data gives the same bytes.
    package var document: String {
        let now = parseTimestamp(at) ?? Date(timeIntervalSince1970: 0)
        var page = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="modelcast report">
            <title>Release page · \(html(target))</title>
            <style>\(ReleasePage.style)</style>
            </head>
            <body>
            <header>
            <h1>Release page</h1>
            <p class="lead">Target <code id="target">\(html(target))</code> as of <time datetime="\(html(at))">\(pageTime(now))</time></p>
            <nav aria-label="Channels">\(channels.map(\.chip).joined(separator: " "))</nav>
            </header>
            <main>

            """
        if let keySets { page += keySets.section }
        for channel in channels { page += channel.section(now: now) }
        page += """
            </main>
            <footer>Drawn by <code>modelcast report</code> from what the target holds. Every value shown is the target's, as text.</footer>
            </body>
            </html>

            """
        return page
    }
}

extension ReleaseKeySets {
    /// The chain as the target publishes it, oldest first, with what each version says and
    /// who signed it; the page says where trust really comes from.
    fileprivate var section: String {
        var out = "<section class=\"keysets\" id=\"key-sets\">\n<h2>Key sets <small>as published on the target</small></h2>\n"
        out += "<p class=\"lead\">The chain as published: <code>keys/N.json</code> read from the target and each version checked against the one before, from <code>keys/1.json</code>. "
            + "What a device trusts is the key set pinned in the app and the versions it verifies from that one; this page cannot know which one your app pins.</p>\n"
        if let problem { out += "<p class=\"note\">The chain stops here: \(html(problem))</p>\n" }
        if truncated { out += "<p class=\"note\">Only the first \(ReleaseKeySets.maxVersions) versions are shown.</p>\n" }
        guard !chain.isEmpty else { return out + "</section>\n" }
        out += "<article class=\"card wide\"><table class=\"keysets\"><thead><tr><th>Version</th><th>Root keys</th><th>Manifest keys</th><th>Signed by</th><th>Sequence floors</th><th>Expires</th></tr></thead><tbody>\n"
        for (index, version) in chain.enumerated() {
            let newest = index == chain.count - 1
            let days = version.daysLeft
            let tone = !newest ? "plain" : days < 0 ? "fail" : days < 30 ? "warn" : "pass"
            let left = days < 0 ? "expired \(Self.daysText(-days)) ago" : "\(Self.daysText(days)) left"
            out += "<tr><td><strong>key set \(version.version)</strong>\(newest ? "<br><span class=\"tag pass\">newest</span>" : "<br><span class=\"requires\">superseded</span>")</td>"
            out += "<td>\(Self.role(version.root))</td><td>\(Self.role(version.manifest))</td>"
            out += "<td>\(version.signedBy.isEmpty ? "none" : version.signedBy.map { "<code>\(html($0))</code>" }.joined(separator: ", "))</td>"
            let floors = (version.sequenceFloors ?? [:]).sorted { $0.key < $1.key }.map { "\(html($0.key)) \($0.value)" }
            out += "<td>\(floors.isEmpty ? "none" : floors.joined(separator: "<br>"))</td>"
            out += "<td>\(pageTime(version.expiresAt))<br><span class=\"tag \(tone)\">\(left)</span></td></tr>\n"
        }
        return out + "</tbody></table></article>\n</section>\n"
    }

    /// "2 of 3: A, B, C".
    private static func role(_ role: KeySetChainReport.Role) -> String {
        "\(role.threshold) of \(role.keys.count): " + role.keys.map { "<code>\(html($0))</code>" }.joined(separator: ", ")
    }

    private static func daysText(_ days: Double) -> String {
        let text = days.rounded() == days ? String(Int(days)) : String(format: "%.1f", days)
        return text == "1" ? "1 day" : "\(text) days"
    }
}

extension ChannelReport {
    fileprivate var anchor: String { htmlID("channel", name) }

    /// The channel's link in the page's header, coloured by how it stands.
    fileprivate var chip: String {
        let tone = verify.map { $0.failures > 0 ? "fail" : $0.warnings > 0 ? "warn" : "pass" } ?? (notes.isEmpty ? "plain" : "warn")
        let sequence = live.map { " · sequence \($0.sequence)" } ?? ""
        return "<a class=\"chip \(tone)\" href=\"#\(anchor)\">\(html(name))\(sequence)</a>"
    }

    fileprivate func section(now: Date) -> String {
        var out = "<section class=\"channel\" id=\"\(anchor)\">\n"
        out += "<h2>Channel <span class=\"name\">\(html(name))</span> <small><code>\(html(manifestKey))</code></small></h2>\n"
        for note in notes { out += "<p class=\"note\">\(html(note))</p>\n" }
        out += "<div class=\"cards\">\n"
        out += liveCard + signatureCard + rolloutCard(now: now)
        out += "</div>\n"
        out += historyCard + verifyCard
        return out + "</section>\n"
    }

    private var liveCard: String {
        var out = "<article class=\"card live\" id=\"\(htmlID(name, "live"))\"><h3>Live release</h3>\n"
        guard let live else { return out + "<p class=\"empty\">Nothing readable is live.</p></article>\n" }
        out += "<p class=\"big\">sequence \(live.sequence)</p>\n<dl>"
        out += "<dt>Published</dt><dd>\(pageTime(live.publishedAt))</dd>"
        out += "<dt>Expires</dt><dd>\(live.expiresAt.map(pageTime) ?? "never")</dd>"
        out += "<dt>Profile</dt><dd>\(html(live.profile))</dd>"
        if let minimum = live.minAppVersion { out += "<dt>Min app version</dt><dd>\(html(minimum))</dd>" }
        out += "<dt>Total size</dt><dd>\(pageSize(live.totalSize))</dd></dl>\n"
        out += "<table class=\"models\"><thead><tr><th>Model</th><th>Version</th><th>Size</th><th>Files (SHA-256)</th></tr></thead><tbody>\n"
        for model in live.models {
            var label = "<strong>\(html(model.name))</strong>"
            if let variant = model.variant { label += "<br><span class=\"variant\">variant \(html(variant))</span>" }
            if let requires = model.requires { label += "<br><span class=\"requires\">needs \(html(requires))</span>" }
            if model.modelSigned { label += "<br><span class=\"tag pass\">model signed</span>" }
            if let licence = model.licence { label += "<br><span class=\"requires\">\(html(ModelPolicyText.licence(licence)))</span>" }
            if let conditions = model.downloadConditions.flatMap(ModelPolicyText.conditions) { label += "<br><span class=\"requires\">downloads on \(html(conditions))</span>" }
            if let storage = model.storage { label += "<br><span class=\"size\">\(html(ModelPolicyText.storage(storage)))</span>" }
            for key in model.meta.keys.sorted() { label += "<br><span class=\"meta\">\(html(key)): \(html(model.meta[key]!))</span>" }
            let files = model.files.map { file in
                "<div class=\"file\"><span>\(html(file.name))</span> <span class=\"size\">\(pageSize(file.size))</span><br><code class=\"hash\">\(html(file.sha256))</code></div>"
            }.joined()
            out += "<tr><td>\(label)</td><td>\(html(model.version))</td><td>\(pageSize(model.size))</td><td>\(files)</td></tr>\n"
        }
        return out + "</tbody></table></article>\n"
    }

    private func rolloutCard(now: Date) -> String {
        var out = "<article class=\"card rollout\" id=\"\(htmlID(name, "rollout"))\"><h3>Staged rollout</h3>\n"
        guard let rollout else {
            return out + "<p class=\"empty\">No staged rollout: every device gets the live release.</p></article>\n"
        }
        let tone = rollout.state == .halted ? "fail" : rollout.state == .complete ? "pass" : "warn"
        out += "<p class=\"big\">\(pagePercent(rollout.percentNow))% <span class=\"tag \(tone)\">\(rollout.state.rawValue)</span></p>\n"
        out += "<div class=\"rollout-body\"><div>\n"
        out += "<dl><dt>Candidate</dt><dd>sequence \(rollout.candidateSequence)\(versionsText(rollout.candidateVersions))</dd>"
        out += "<dt>Fallback</dt><dd>\(rollout.fallbackSequence.map { "sequence \($0)" } ?? "none")\(versionsText(rollout.fallbackVersions))</dd>"
        out += "<dt>Started</dt><dd>\(pageTime(rollout.startedAt))</dd></dl>\n"
        out += "<ol class=\"steps\">" + rollout.curve.map { point in
            let when = parseTimestamp(point.at).map { $0 > now ? " (to come)" : "" } ?? ""
            return "<li>\(pagePercent(point.percent))% from \(pageTime(point.at))\(when)</li>"
        }.joined() + "</ol>\n"
        if let schedule = rollout.schedule {
            out += "<p class=\"schedule\">Schedule: " + schedule.map { "\(pagePercent($0.percent))% at \(pageTime($0.at))" }.joined(separator: ", ") + "</p>\n"
        }
        out += "</div><div>\n" + RolloutChart(rollout: rollout, now: now).svg + "\n"
        out += "<p class=\"legend\"><span class=\"key actual\"></span>share set by the releases <span class=\"key planned\"></span>the schedule given</p>\n"
        return out + "</div></div></article>\n"
    }

    private var signatureCard: String {
        var out = "<article class=\"card signature\" id=\"\(htmlID(name, "signature"))\"><h3>Signature</h3>\n"
        let tone = signature.state == .signed ? "pass" : signature.state == .unreadable ? "fail" : "warn"
        out += "<p class=\"big\"><span class=\"tag \(tone)\">\(signature.state.rawValue)</span></p>\n<dl>"
        if let keyID = signature.keyID { out += "<dt>Key id</dt><dd><code>\(html(keyID.uppercased()))</code></dd>" }
        if let sequence = signature.signedSequence { out += "<dt>Signs sequence</dt><dd>\(sequence)</dd>" }
        out += "<dt>Expires</dt><dd>\(signature.expiresAt.map(pageTime) ?? "never")</dd>"
        if let days = signature.daysLeft {
            let dayTone = days < 0 ? "fail" : days < 7 ? "warn" : "pass"
            let text = days < 0 ? "expired \(daysText(-days)) ago" : "\(daysText(days)) left"
            out += "<dt>Days left</dt><dd><span class=\"tag \(dayTone)\">\(text)</span></dd>"
        }
        if let keySet = signature.keySet {
            let met = keySet.signers.count >= keySet.threshold
            let who = keySet.signers.isEmpty ? "" : " (" + keySet.signers.map { "<code>\(html($0))</code>" }.joined(separator: ", ") + ")"
            out += "<dt>Key set</dt><dd><span class=\"tag \(met ? "pass" : "fail")\">\(html("signed by \(keySet.signers.count) of key set \(keySet.version)'s manifest keys"))</span>"
                + "\(who); it needs \(keySet.threshold)"
                + (keySet.problem.map { "<br><span class=\"requires\">\(html($0))</span>" } ?? "") + "</dd>"
        }
        let checked = signature.checked.map { "verify: \($0.rawValue)" } ?? "not checked (run report --verify --public-key KEY)"
        out += "<dt>Checked</dt><dd>\(checked)</dd></dl>\n"
        return out + "</article>\n"
    }

    private var historyCard: String {
        var out = "<article class=\"card wide history\" id=\"\(htmlID(name, "history"))\"><h3>History</h3>\n"
        guard !history.isEmpty else { return out + "<p class=\"empty\">No history records.</p></article>\n" }
        out += "<ol class=\"timeline\">\n"
        for entry in history {
            let action = entry.action?.rawValue ?? "publish"
            out += "<li class=\"event \(htmlID(action)) \(htmlID(entry.state.rawValue))\"><span class=\"seq\">\(entry.sequence)</span> "
            out += "<span class=\"when\">\(pageTime(entry.publishedAt))</span> "
            out += "<span class=\"action\">\(ChannelReport.actionTitle(entry.action))</span> "
            out += "<span class=\"state tag \(entry.state == .live ? "pass" : entry.state == .pending || entry.state == .neverLive ? "warn" : "plain")\">\(entry.state.rawValue)</span>"
            if let detail = entry.detail { out += "<div class=\"detail\">\(html(detail))</div>" }
            if !entry.changes.isEmpty { out += "<div class=\"changes\">" + entry.changes.map(html).joined(separator: "; ") + "</div>" }
            out += "<div class=\"versions\">\(html(entry.versions.keys.sorted().map { "\($0) \(entry.versions[$0]!)" }.joined(separator: ", ")))</div>"
            out += "</li>\n"
        }
        return out + "</ol></article>\n"
    }

    private var verifyCard: String {
        guard let verify else { return "" }
        var out = "<article class=\"card wide verify\" id=\"\(htmlID(name, "verify"))\"><h3>Verify</h3>\n"
        let verdict = verify.passed ? "passed" : "failed"
        let skipped = verify.checks.filter { $0.status == .skip }.count
        out += "<p><span class=\"tag \(verify.passed ? "pass" : "fail")\">\(verdict)</span> \(verify.checks.count) checks, \(verify.failures) failed, \(verify.warnings) warned\(skipped > 0 ? ", \(skipped) not checked" : "")</p>\n"
        out += "<table class=\"checks\"><thead><tr><th></th><th>Check</th><th>Subject</th><th>Detail</th></tr></thead><tbody>\n"
        for check in verify.checks {
            out += "<tr class=\"\(check.status.rawValue)\"><td><span class=\"tag \(check.status.rawValue)\">\(check.status.rawValue)</span></td>"
            out += "<td>\(html(check.check))</td><td><code>\(html(check.subject))</code></td><td>\(html(check.detail))</td></tr>\n"
        }
        return out + "</tbody></table></article>\n"
    }

    private func versionsText(_ versions: [String: String]) -> String {
        versions.isEmpty ? "" : " (" + html(versions.keys.sorted().map { "\($0) \(versions[$0]!)" }.joined(separator: ", ")) + ")"
    }

    private func daysText(_ days: Double) -> String {
        let text = days.rounded() == days ? String(Int(days)) : String(format: "%.1f", days)
        return text == "1" ? "1 day" : "\(text) days"
    }

    static func actionTitle(_ action: HistoryEntry.Action?) -> String {
        switch action {
        case .publish, nil: "Published"
        case .rollout: "Rollout"
        case .rolloutHalt: "Rollout halted"
        case .rolloutComplete: "Rollout completed"
        case .rollback: "Rolled back"
        case .promote: "Promoted"
        case .republish: "Re-signed / re-published"
        }
    }
}

extension ReleasePage {
    /// The page's whole style: system fonts, light and dark.
    static let style = """

        :root{--bg:#f6f7f9;--card:#fff;--ink:#1c2330;--muted:#5d6675;--line:#dde1e7;--accent:#2f6fde;--pass:#1d7a46;--pass-bg:#e3f4ea;--warn:#8a5a00;--warn-bg:#fcf0d6;--fail:#b42318;--fail-bg:#fde7e5}
        @media (prefers-color-scheme:dark){:root{--bg:#12161d;--card:#1b212b;--ink:#e6e9ee;--muted:#9aa3b2;--line:#2c3440;--accent:#6d9cf0;--pass:#6fd39a;--pass-bg:#173526;--warn:#f0c062;--warn-bg:#3a2f14;--fail:#ff8a80;--fail-bg:#43201d}}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
        header,main,footer{max-width:1180px;margin:0 auto;padding:0 24px}
        header{padding-top:28px}
        h1{margin:0 0 4px;font-size:26px}
        h2{margin:32px 0 12px;font-size:21px}
        h2 small{font-weight:normal;color:var(--muted);font-size:14px}
        h3{margin:0 0 10px;font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
        code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
        .lead{color:var(--muted);margin:0 0 12px}
        nav{display:flex;flex-wrap:wrap;gap:8px}
        .chip{display:inline-block;padding:3px 12px;border-radius:999px;border:1px solid var(--line);background:var(--card);color:var(--ink);text-decoration:none;font-weight:600}
        .chip.pass{border-color:var(--pass)}.chip.warn{border-color:var(--warn)}.chip.fail{border-color:var(--fail)}
        .cards{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:16px}
        .card.live{grid-column:span 2}.card.rollout{grid-column:1/-1}
        .rollout-body{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,2fr);gap:24px;align-items:start}
        @media (max-width:900px){.cards,.rollout-body{grid-template-columns:minmax(0,1fr)}.card.live{grid-column:auto}}
        .card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 18px;min-width:0}
        .card.wide{margin-top:16px}
        .big{font-size:24px;font-weight:700;margin:0 0 8px}
        dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0 0 10px}
        dt{color:var(--muted)}dd{margin:0;overflow-wrap:break-word}
        table{width:100%;border-collapse:collapse;font-size:14px}
        th{text-align:left;color:var(--muted);font-weight:600;border-bottom:1px solid var(--line);padding:4px 6px}
        td{border-bottom:1px solid var(--line);padding:6px;vertical-align:top;overflow-wrap:break-word}
        .hash{word-break:break-all;color:var(--muted);font-size:12px}
        .file+.file{margin-top:6px}
        .size,.variant,.requires,.meta{color:var(--muted);font-size:13px}
        .tag{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:6px;font-size:12px;font-weight:600;vertical-align:middle;background:var(--line);color:var(--ink)}
        .tag.pass{background:var(--pass-bg);color:var(--pass)}.tag.warn{background:var(--warn-bg);color:var(--warn)}.tag.fail{background:var(--fail-bg);color:var(--fail)}.tag.skip{background:none;color:var(--muted);border:1px dashed var(--line)}
        .note{background:var(--warn-bg);color:var(--warn);border-radius:8px;padding:8px 12px;overflow-wrap:break-word}
        .empty{color:var(--muted)}
        svg.curve{width:100%;max-width:760px;height:auto;display:block;margin:0 0 6px}
        svg .grid{stroke:var(--line);stroke-width:1}
        svg .axis,svg .now-label{fill:var(--muted);font-size:11px}
        svg .actual{fill:none;stroke:var(--accent);stroke-width:2.5}
        svg .future{fill:none;stroke:var(--accent);stroke-width:2;stroke-dasharray:5 4}
        svg .planned{fill:none;stroke:var(--muted);stroke-width:1.5;stroke-dasharray:2 4}
        svg .step{fill:var(--accent)}svg .step.future{fill:var(--card);stroke:var(--accent)}
        svg .now{stroke:var(--fail);stroke-width:1.5}
        .legend{color:var(--muted);font-size:13px;margin:0}
        .key{display:inline-block;width:22px;height:0;border-top:2.5px solid var(--accent);vertical-align:middle;margin:0 4px 0 10px}
        .key.planned{border-top:1.5px dashed var(--muted)}
        .steps{color:var(--muted);font-size:13px;margin:6px 0 0;padding-left:20px}
        .schedule{color:var(--muted);font-size:13px;margin:4px 0 0}
        .timeline{list-style:none;margin:0;padding:0 0 0 18px;border-left:2px solid var(--line)}
        .event{position:relative;padding:0 0 14px 10px}
        .event::before{content:"";position:absolute;left:-25px;top:5px;width:12px;height:12px;border-radius:50%;background:var(--card);border:2px solid var(--muted)}
        .event.live::before{background:var(--pass);border-color:var(--pass)}
        .event.rollback::before{border-color:var(--fail)}.event.rollout-halt::before{background:var(--fail);border-color:var(--fail)}
        .event.rollout::before,.event.rollout-complete::before{border-color:var(--accent)}
        .seq{font-weight:700}.seq::before{content:"#"}
        .when{color:var(--muted);font-size:13px}
        .action{font-weight:600}
        .detail{overflow-wrap:break-word}
        .changes{font-size:13px}
        .versions{color:var(--muted);font-size:13px}
        tr.fail td{background:var(--fail-bg)}
        footer{color:var(--muted);font-size:13px;padding-top:24px;padding-bottom:32px}

        """
}
