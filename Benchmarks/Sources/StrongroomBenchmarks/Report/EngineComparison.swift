import Foundation

/// The same workloads measured on two SQLCipher engines, side by side: `make
/// bench` runs the engine-sensitive groups (core, encryption, open, pool, fields) on SQLCipher
/// 4.6.1 first (`report-sqlcipher4/`), then everything on the system's
/// SQLCipher, and the second run reads the first's report.json
/// (`--engine-report`). Each engine's figures come from its own run, so the
/// columns compare medians of two runs on one machine; the ratios to C are
/// each measured side by side within its run, and compare across engines.
struct EngineComparison: Codable, Sendable {
    struct Row: Codable, Sendable {
        let workload: String
        let size: Int
        let unit: String
        let contender: String
        /// The median on this run's engine, and on the other.
        let here: Double
        let there: Double
        /// The contender's median over C's, on each engine (nil without C).
        let toCHere: Double?
        let toCThere: Double?
        /// The p99 latency per operation (µs) on each engine, where the
        /// workload timed each operation (the async pool); nil elsewhere.
        var p99Here: Double? = nil
        var p99There: Double? = nil
    }

    /// "SQLCipher 3.4.1 on SQLite 3.15.2".
    let hereEngine: String
    let thereEngine: String
    let rows: [Row]

    /// Every contender of every workload (name and size) that both runs measured.
    init(here: Report, there: Report) {
        hereEngine = "SQLCipher \(here.environment.sqlcipher) on SQLite \(here.environment.sqlcipherSQLite)"
        thereEngine = "SQLCipher \(there.environment.sqlcipher) on SQLite \(there.environment.sqlcipherSQLite)"
        var rows: [Row] = []
        for w in here.workloads {
            guard let other = there.workloads.first(where: { $0.name == w.name && $0.size == w.size && $0.unit == w.unit }) else { continue }
            // GRDB and its C loop run on the system's plaintext SQLite in
            // both runs: not an engine to compare.
            for c in w.contenders where c.ownC == nil && c.role != .peer {
                guard let o = other.contender(c.name) else { continue }
                rows.append(Row(workload: w.name, size: w.size, unit: w.unit, contender: c.name,
                                here: c.samples.median, there: o.samples.median,
                                toCHere: w.c.map { c.samples.median / $0.samples.median },
                                toCThere: other.c.map { o.samples.median / $0.samples.median },
                                p99Here: w.latencies?[c.name]?.p99, p99There: other.latencies?[c.name]?.p99))
            }
        }
        self.rows = rows
    }

    /// The Markdown section.
    var markdown: [String] {
        var lines = ["## Engines side by side", "",
                     "The same workloads on \(hereEngine) (this run) and \(thereEngine) (`--engine-report`), each engine with its own defaults (SQLCipher 3: 1 KiB pages, PBKDF2-HMAC-SHA1 64,000; SQLCipher 4: 4 KiB pages, PBKDF2-HMAC-SHA512 256,000). Medians of two runs on one machine; the ratios to C are each measured within its run.", "",
                     "| workload | contender | \(hereEngine) | \(thereEngine) | vs C, here | vs C, there |", "|---|---|---|---|---|---|"]
        for r in rows {
            let toC = { (x: Double?) in x.map { String(format: "%.2fx", $0) } ?? "" }
            lines.append("| \(r.workload), \(formattedSize(r.size)) | \(r.contender) | \(formatted(r.here, unit: r.unit)) | \(formatted(r.there, unit: r.unit)) | \(toC(r.toCHere)) | \(toC(r.toCThere)) |")
        }
        // The latencies of the workloads that timed each operation.
        let timed = rows.filter { $0.p99Here != nil || $0.p99There != nil }
        if !timed.isEmpty {
            lines += ["", "p99 latency per operation on each engine (medians of each run's rounds):", "",
                      "| workload | contender | p99, \(hereEngine) | p99, \(thereEngine) |", "|---|---|---|---|"]
            let time = { (x: Double?) in x.map { formatted($0 / 1e6, unit: "s") } ?? "–" }
            for r in timed {
                lines.append("| \(r.workload), \(formattedSize(r.size)) | \(r.contender) | \(time(r.p99Here)) | \(time(r.p99There)) |")
            }
        }
        return lines
    }
}
