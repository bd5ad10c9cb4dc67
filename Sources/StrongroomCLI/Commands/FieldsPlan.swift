import ArgumentParser
import Foundation
import Strongroom
import StrongroomFields

extension Fields {
    /// `strongroom fields plan`: what a blind index would reveal at each
    /// length, measured on the database's own values.
    struct Plan: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure, on the real values, how many rows share each blind index value at each length, and the largest safe length.",
            discussion: "Opens the values with the field keyring, read only. Give --column TABLE.COLUMN (the exact value, or with --transform) or --index TABLE.NAME (a recorded index).")
        @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
        @Option(help: ArgumentHelp("A sealed column to plan an index of.", valueName: "table.column")) var column: String?
        @Option(help: ArgumentHelp("With --column: transformations, comma-separated (trim, nfkc-casefold, digits, prefix:N, suffix:N, year, year-month).", valueName: "list"))
        var transform: String?
        @Option(help: ArgumentHelp("A recorded blind index to plan.", valueName: "table.name")) var index: String?
        @Option(help: "The fewest rows an index value must stand for.") var k = 2
        @Option(name: .customLong("max-bits"), help: "The longest length to try.") var maximumBits = 64
        @OptionGroup var key: KeyOptions
        @OptionGroup var keyring: FieldKeyOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (column == nil) != (index == nil) else { throw ValidationError("Give --column TABLE.COLUMN or --index TABLE.NAME (one of them).") }
            if transform != nil && column == nil { throw ValidationError("--transform goes with --column.") }
            guard k >= 1 else { throw ValidationError("--k must be at least 1.") }
            guard (1...BlindIndex.maximumBits).contains(maximumBits) else { throw ValidationError("--max-bits is 1 to \(BlindIndex.maximumBits).") }
            _ = try planned(recorded: [])
        }

        /// The index to plan: --column's (COLUMN_index, 128 bits), or the recorded one.
        func planned(recorded: [BlindIndexRegistry.Entry]) throws -> BlindIndex? {
            if let column {
                let (table, name) = try Fields.tableAndName(column)
                // At 128 bits: the exact index `indexed` gives, measured beside the shorter lengths.
                let spec = "\(table).\(name)_index=\(name)" + (transform.map { ":" + $0 } ?? "") + "/\(BlindIndex.maximumBits)"
                return try BlindIndexSpec.parse(spec)
            }
            guard let index else { return nil }
            let (table, name) = try Fields.tableAndName(index)
            guard !recorded.isEmpty else { return nil }
            guard let entry = recorded.first(where: { $0.index.table.sqliteFolded == table.sqliteFolded && $0.index.name.sqliteFolded == name.sqliteFolded }) else {
                throw StrongroomError(.misuse, "\(database) records no blind index \(index); its indexes are \(recorded.map { "\($0.index.table).\($0.index.name)" }.joined(separator: ", ")).")
            }
            return entry.index
        }

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                guard let fieldKeys = try keyring.load(key: key) else {
                    throw StrongroomError(.misuse, "Give the field keyring with --field-keys PATH, --field-keys-credential NAME or --field-keys-command CMD: the planner opens the values.")
                }
                let queue = try DatabaseQueue(path: database, configuration: key.existing(try key.loadKey(), readOnly: true))
                let bar = ProgressBar()
                let plan = try queue.read { db in
                    let recorded = try BlindIndexRegistry.entries(in: db, keyring: fieldKeys)
                    guard let target = try planned(recorded: recorded) else {
                        throw StrongroomError(.misuse, "\(database) records no blind index.")
                    }
                    return try BlindIndexPlanner.plan(target, in: db, keyring: fieldKeys, k: k, maximumBits: maximumBits) { phase in
                        switch phase {
                        case .reading(let done, let total): bar.draw(line: "reading \(done) of \(total) rows")
                        case .measuring(let done, let total): bar.draw(line: "measuring length \(done) of up to \(total)")
                        }
                    }
                }
                bar.finish()
                if output.json {
                    Output.json(WithField(base: plan, key: "database", value: database))
                    return
                }
                Swift.print(Self.table(plan))
                for warning in plan.warnings { Output.error("strongroom: warning: \(warning)") }
            }
        }

        static func table(_ plan: BlindIndexPlanner.Plan) -> String {
            func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
            func number(_ x: Double) -> String { x >= 100 ? String(format: "%.0f", x) : String(format: "%.2f", x) }
            var lines = ["\(plan.index.table): \(plan.rows) rows, \(plan.indexedRows) with a value, \(plan.distinctValues) distinct values after the transformations (K = \(String(format: "%.1f", plan.inputBits)) bits); k = \(plan.k)."]
            lines.append(["bits", "expected C", "measured C", "index values", "largest", "smallest", "singled out", "2<=C<sqrt(R)"].enumerated()
                .map { pad($1, [4, 11, 11, 13, 8, 9, 12, 13][$0]) }.joined(separator: " "))
            for c in plan.candidates {
                lines.append([String(c.bits), number(c.expectedRowsPerValue), number(c.measuredRowsPerValue), String(c.indexValues), String(c.largestGroup),
                              String(c.smallestGroup), String(c.rowsSingledOut), c.withinGuidance ? "yes" : "no"].enumerated()
                    .map { pad($1, [4, 11, 11, 13, 8, 9, 12, 13][$0]) }.joined(separator: " "))
            }
            if let bits = plan.recommendedBits {
                lines.append("Largest length keeping every index value shared by at least \(plan.k) rows: \(bits) bits.")
            } else {
                lines.append("No length keeps every index value shared by at least \(plan.k) rows: index this column together with another (a compound index), or not at all.")
            }
            return lines.joined(separator: "\n")
        }
    }
}
