import Strongroom

/// How import and export print what they copied.
enum Conversion {
    static func print(_ report: PlaintextConversion.Report, verb: String, from: String, to: String, json: Bool) {
        if json {
            Output.json(report)
            return
        }
        let rows = report.tables.reduce(0) { $0 + $1.rowCount }
        Swift.print("\(verb) \(from) into \(to): \(report.tables.count) tables, \(rows) rows, user_version \(report.userVersion); every table's row count and content hash match the source.")
        for table in report.tables {
            Swift.print("  \(table.name): \(table.rowCount) rows, sha256 \(table.sha256.prefix(16))…")
        }
    }
}
