import Foundation

/// `report.md`: the machine, then a table per workload (median, minimum,
/// maximum of every contender, ratios to C and to GRDB), then the targets.
struct MarkdownReport {
    let report: Report

    var text: String {
        var lines: [String] = []
        let e = report.environment
        lines.append("# Strongroom benchmark report")
        lines.append("")
        lines.append("Run of \(e.date) on \(e.host): \(e.machine).")
        lines.append("\(e.swift). SQLCipher \(e.sqlcipher) on SQLite \(e.sqlcipherSQLite) (ours and C); system SQLite \(e.systemSQLite) (GRDB); \(e.openssl). \(e.measured).")
        lines.append("Settings: " + report.settings.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ".")
        lines.append("Workloads measured by the runner: one warm-up round, then rounds in which every contender runs once, the order rotated and reversed from round to round (GRDB runs in a new process each time, so its warm-up warms only the kernel's page cache). Ratios are of medians. Page sizes: the linked SQLCipher's default for encrypted files (C and Strongroom: 1024 bytes on SQLCipher 3, 4096 on SQLCipher 4), SQLite's default of 4096 for plaintext files (GRDB, and Strongroom plaintext): each side's defaults.")
        lines.append("")
        lines.append("![Strongroom benchmark report](report.svg)")
        lines.append("")
        lines.append("## Targets")
        lines.append("")
        lines.append(contentsOf: targetRows)
        lines.append("")
        if let engines = report.engines {
            lines.append(contentsOf: engines.markdown)
            lines.append("")
        }
        lines.append("## Workloads")
        for w in report.workloads {
            lines.append("")
            lines.append("### \(w.name), \(formattedSize(w.size))")
            lines.append("")
            lines.append(contentsOf: Self.table(of: w))
            for (key, value) in w.figures.sorted(by: { $0.key < $1.key }) {
                lines.append("")
                lines.append("- \(key): \(value.isFinite && value.rounded() == value ? String(Int(value)) : String(format: "%.3f", value))")
            }
            for note in w.notes {
                lines.append("")
                lines.append(note)
            }
        }
        lines.append("")
        return lines.joined(separator: "\n")
    }
}

extension MarkdownReport {
    /// The targets as a Markdown table: workload, size, target, achieved, met.
    var targetRows: [String] {
        var lines = ["| workload | size | target | achieved | |", "|---|---|---|---|---|"]
        for w in report.workloads {
            for t in w.targets {
                lines.append("| \(w.name) | \(formattedSize(w.size)) | \(w.summary(of: t)) | \(w.formattedAchievement(t)) | \(t.met ? "✓" : "✗ missed") |")
            }
        }
        return lines
    }

    /// One workload's contenders as a Markdown table: median, minimum,
    /// maximum, and the ratios to C and to GRDB where the workload has them.
    static func table(of w: WorkloadResult) -> [String] {
        let peer = w.contenders.first { $0.role == .peer }
        // Where some contender runs on another engine with its own C loop,
        // each ratio is also given over the C loop on its own engine.
        let ownC = w.contenders.contains { $0.ownC != nil }
        let counts = w.instructions ?? [:]
        var header = "| contender | median | min | max |"
        var rule = "|---|---|---|---|"
        if w.c != nil { header += " vs C |"; rule += "---|" }
        if ownC { header += " vs its C |"; rule += "---|" }
        if peer != nil { header += " vs GRDB |"; rule += "---|" }
        if !counts.isEmpty { header += " instructions | vs its C, instructions |"; rule += "---|---|" }
        // Latencies per operation, where the workload timed each (the async pool).
        let latencies = w.latencies ?? [:]
        let peerLatencies = w.contenders.contains { $0.role == .peer && latencies[$0.name] != nil }
        // p99.9 where some contender has it (the service's); reads and writes
        // apart where some contender has them (the async pool's).
        let tail = latencies.values.contains { $0.p999 != nil }
        let split = latencies.values.contains { $0.readP50 != nil || $0.writeP50 != nil }
        if !latencies.isEmpty {
            header += " p50 | p99 |"; rule += "---|---|"
            if tail { header += " p99.9 |"; rule += "---|" }
            if peerLatencies { header += " p99 vs GRDB |"; rule += "---|" }
            if split { header += " reads p50, p99 | writes p50, p99 |"; rule += "---|---|" }
        }
        var lines = [header, rule]
        let ratio = { (x: Double?) in x.map { String(format: " %.2fx |", $0) } ?? " |" }
        for r in w.contenders {
            var line = "| \(r.name) | \(formatted(r.samples.median, unit: w.unit)) | \(formatted(r.samples.minimum, unit: w.unit)) | \(formatted(r.samples.maximum, unit: w.unit)) |"
            if let c = w.c { line += String(format: " %.2fx |", r.samples.median / c.samples.median) }
            if ownC { line += ratio(w.ratioToOwnC(r.name)) }
            if peer != nil { line += r.role != .ours ? " |" : String(format: " %.2fx |", r.samples.median / w.peerMedian(like: r)) }
            if !counts.isEmpty {
                line += counts[r.name].map { String(format: " %.0f |", $0) } ?? " |"
                line += ratio(w.instructionRatioToOwnC(r.name))
            }
            if !latencies.isEmpty {
                let l = latencies[r.name]
                let time = { (x: Double?) in x.map { formatted($0 / 1e6, unit: "s") } ?? "–" }
                line += " \(time(l?.p50)) | \(time(l?.p99)) |"
                if tail { line += " \(time(l?.p999)) |" }
                if peerLatencies {
                    line += r.role != .ours ? " |" : ratio(w.peer(like: r).flatMap { w.p99Ratio(r.name, to: $0.name) })
                }
                if split { line += " \(time(l?.readP50)), \(time(l?.readP99)) | \(time(l?.writeP50)), \(time(l?.writeP99)) |" }
            }
            lines.append(line)
        }
        return lines
    }

    /// The targets alone, for the terminal.
    var targetsTable: String {
        var lines = ["target                                                                 achieved   "]
        for w in report.workloads {
            for t in w.targets {
                let achieved = w.formattedAchievement(t)
                let name = "\(w.name) \(formattedSize(w.size)): \(w.summary(of: t))"
                // A longer name or figure is shown whole (padding would cut it).
                lines.append("\(name.count > 70 ? name : name.padding(toLength: 70, withPad: " ", startingAt: 0))  \(achieved.count >= 9 ? achieved : achieved.padding(toLength: 9, withPad: " ", startingAt: 0))  \(t.met ? "ok" : "MISSED")")
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension WorkloadResult {
    /// A target in words, a limit on a measure given in the workload's unit.
    func summary(of t: Target) -> String {
        if t.kind == .ratioAtLeast { return "\(t.summary), in \(unit)" }
        guard t.kind == .valueAtMost, figures[t.contender] == nil, contender(t.contender) != nil else { return t.summary }
        return "\(t.contender) ≤ \(formatted(t.limit, unit: unit))"
    }

    /// A target's achieved figure: a ratio, a count, or a measure in the workload's unit.
    func formattedAchievement(_ t: Target) -> String {
        if let compared = t.compared {
            // What each layer adds to its own C: time in the workload's unit, or instructions.
            // A layer can come out faster than its C: its sign is written.
            if t.kind == .instructionOverheadBelow { return String(format: "%+.0f vs %+.0f", t.achieved, compared) }
            func signed(_ value: Double) -> String { (value < 0 ? "" : "+") + formatted(value, unit: unit) }
            return "\(signed(t.achieved)) vs \(signed(compared))"
        }
        if t.kind != .valueAtMost { return Self.decimals(t.achieved, apartFrom: t.limit) + "x" }
        if figures[t.contender] != nil { return t.achieved.isFinite && t.achieved.rounded() == t.achieved ? String(Int(t.achieved)) : Self.decimals(t.achieved, apartFrom: t.limit) }
        return formatted(t.achieved, unit: unit)
    }

    /// `value` with two decimals, or with as many more (up to six) as it
    /// takes not to read as `limit` when it is not `limit`: a target missed
    /// by 1.1537 against 1.15 reads "1.154", not "1.15".
    static func decimals(_ value: Double, apartFrom limit: Double) -> String {
        var digits = 2
        while digits < 6, value != limit, String(format: "%.\(digits)f", value) == String(format: "%.\(digits)f", limit) { digits += 1 }
        return String(format: "%.\(digits)f", value)
    }

    /// The GRDB contender doing the same kind of work as `contender`
    /// ("Strongroom Codable" → "GRDB Codable"), else the first GRDB one.
    func peer(like contender: ContenderResult) -> ContenderResult? {
        let words = contender.name.split(separator: " ")
        let kind = words.count > 1 ? words[1] : ""
        let peers = contenders.filter { $0.role == .peer }
        return peers.first { $0.name.split(separator: " ").dropFirst().first == kind } ?? peers.first
    }

    /// The median of the GRDB contender doing the same kind of work as `contender`.
    func peerMedian(like contender: ContenderResult) -> Double { peer(like: contender)?.samples.median ?? .nan }
}
