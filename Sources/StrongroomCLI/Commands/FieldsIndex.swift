import ArgumentParser
import Foundation
import Strongroom
import StrongroomFields

extension Fields {
    /// `strongroom fields index add|drop|rebuild`.
    struct Index: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add, change, rebuild or drop the blind indexes of sealed columns.",
            subcommands: [Add.self, Drop.self, Rebuild.self]
        )

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add a blind index (or change the one of that name) and fill it, in resumable batches.",
                discussion: "SPEC: \(BlindIndexSpec.syntax). The index's column and SQL index are added when missing. Run it again after a kill: it goes on where it stopped.")
            @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
            @Argument(help: ArgumentHelp("The index.", valueName: "spec")) var spec: String
            @OptionGroup var key: KeyOptions
            @OptionGroup var keyring: FieldKeyOptions
            @OptionGroup var batch: BatchOptions
            @OptionGroup var output: OutputOptions

            func validate() throws {
                _ = try BlindIndexSpec.parse(spec)
            }

            func run() throws {
                try CommandFailure.reporting(json: output.json) {
                    let index = try BlindIndexSpec.parse(spec)
                    let (queue, fieldKeys) = try Fields.openForIndexes(database, key: key, keyring: keyring)
                    let bar = ProgressBar()
                    let report = try BlindIndexRebuild.add(index, in: queue, keyring: fieldKeys, batchSize: batch.batchSize) { bar.draw(line: Fields.describe($0, index)) }
                    bar.finish()
                    Fields.report(report, database: database, json: output.json)
                }
            }
        }

        struct Rebuild: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Rebuild a recorded blind index with its recorded definition (after a rotation, or to finish a killed rebuild).")
            @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
            @Argument(help: ArgumentHelp("The index, as TABLE.NAME.", valueName: "index")) var name: String
            @OptionGroup var key: KeyOptions
            @OptionGroup var keyring: FieldKeyOptions
            @OptionGroup var batch: BatchOptions
            @OptionGroup var output: OutputOptions

            func validate() throws {
                _ = try Fields.tableAndName(name)
            }

            func run() throws {
                try CommandFailure.reporting(json: output.json) {
                    let (table, indexName) = try Fields.tableAndName(name)
                    let (queue, fieldKeys) = try Fields.openForIndexes(database, key: key, keyring: keyring)
                    let bar = ProgressBar()
                    let report = try BlindIndexRebuild.rebuild(indexName, of: table, in: queue, keyring: fieldKeys, batchSize: batch.batchSize) {
                        bar.draw(line: "\(table).\(indexName): rebuilt \($0.rebuilt) of \($0.total) rows")
                    }
                    bar.finish()
                    Fields.report(report, database: database, json: output.json)
                }
            }
        }

        struct Drop: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Drop a blind index: its SQL index, its values and its record (the column stays, emptied).")
            @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
            @Argument(help: ArgumentHelp("The index, as TABLE.NAME.", valueName: "index")) var name: String
            @OptionGroup var key: KeyOptions
            @OptionGroup var keyring: FieldKeyOptions
            @OptionGroup var output: OutputOptions

            func validate() throws { _ = try Fields.tableAndName(name) }

            func run() throws {
                try CommandFailure.reporting(json: output.json) {
                    let (table, indexName) = try Fields.tableAndName(name)
                    let (queue, fieldKeys) = try Fields.openForIndexes(database, key: key, keyring: keyring)
                    try BlindIndexRebuild.drop(indexName, of: table, in: queue, keyring: fieldKeys)
                    if output.json {
                        Output.json(["database": database, "dropped": "\(table).\(indexName)"])
                    } else {
                        Swift.print("Dropped blind index \(table).\(indexName) of \(database); its column stays, emptied.")
                    }
                }
            }
        }
    }

    /// `TABLE.NAME`.
    static func tableAndName(_ text: String) throws -> (String, String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ValidationError("'\(text)': name the index as TABLE.NAME (see `strongroom fields status`).")
        }
        return (parts[0], parts[1])
    }

    static func openForIndexes(_ database: String, key: KeyOptions, keyring: FieldKeyOptions) throws -> (DatabaseQueue, FieldKeyring) {
        guard let fieldKeys = try keyring.load(key: key) else {
            throw StrongroomError(.misuse, "Give the field keyring with --field-keys PATH, --field-keys-credential NAME or --field-keys-command CMD: index values are computed with it, and the registry's signature checked.")
        }
        return (try DatabaseQueue(path: database, configuration: key.existing(try key.loadKey())), fieldKeys)
    }

    static func describe(_ progress: BlindIndexRebuild.Progress, _ index: BlindIndex) -> String {
        "\(index.table).\(index.name): \(progress.rebuilt) of \(progress.total) rows"
    }

    static func report(_ report: BlindIndexRebuild.Report, database: String, json: Bool) {
        if json {
            Output.json(["database": database, "index": "\(report.index.table).\(report.index.name)", "definition": report.index.description,
                         "rows": "\(report.rows)", "batches": "\(report.batches)", "resumed_after_rowid": report.resumedAfter.map(String.init) ?? ""])
        } else {
            Swift.print("Built \(report.index) of \(database): \(report.rows) rows in \(report.batches) batches\(report.resumedAfter.map { ", going on after rowid \($0)" } ?? "").")
        }
    }
}
