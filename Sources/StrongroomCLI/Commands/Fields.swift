import ArgumentParser
import Foundation
import Strongroom
import StrongroomFields

/// `strongroom fields …`: the field keyring and the sealed columns a
/// database records.
struct Fields: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage field keys: add and activate keys, re-seal values under the active key, status, retire old keys.",
        subcommands: [AddKey.self, Activate.self, Rotate.self, Status.self, Retire.self, Index.self, Plan.self, Confirm.self]
    )

    struct AddKey: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-key", abstract: "Add a new random key to the keyring (not active yet).")
        @OptionGroup var keyring: FieldKeyOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                var id: UInt32 = 0
                let path = try keyring.requirePath()
                let more = try FieldKeyring.update(at: path, unwrappingWith: try keyring.unwrapping(timeout: KeyCommand.defaultTimeout)) { current in
                    let (added, newID) = current.addingKey()
                    id = newID
                    return added
                }
                if output.json {
                    Output.json(["field_keyring": path, "key_id": "\(id)"])
                } else {
                    print("Added key \(id) to \(path); key \(more.activeKeyID) is still active. Back the keyring up, then `strongroom fields activate --key-id \(id)`.")
                }
            }
        }
    }

    struct Activate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key of the keyring the one new values are sealed under.")
        @OptionGroup var keyring: FieldKeyOptions
        @Option(name: .customLong("key-id"), help: "The key to activate.") var keyID: UInt32
        @OptionGroup var output: OutputOptions

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                let path = try keyring.requirePath()
                try FieldKeyring.update(at: path, unwrappingWith: try keyring.unwrapping(timeout: KeyCommand.defaultTimeout)) { try $0.activating(keyID) }
                if output.json {
                    Output.json(["field_keyring": path, "active_key_id": "\(keyID)"])
                } else {
                    print("Key \(keyID) is now active in \(path). Re-seal existing values with `strongroom fields rotate`.")
                }
            }
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Re-seal every sealed value not under the active key, in batches (each its own transaction; resumable).")
        @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
        @OptionGroup var key: KeyOptions
        @OptionGroup var keyring: FieldKeyOptions
        @OptionGroup var batch: BatchOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                guard let fieldKeys = try keyring.load(key: key) else {
                    throw StrongroomError(.misuse, "Give the field keyring with --field-keys PATH, --field-keys-credential NAME or --field-keys-command CMD.")
                }
                let queue = try DatabaseQueue(path: database, configuration: self.key.existing(try key.loadKey()))
                // The registry's columns, and any column its envelopes show sealed that it forgot.
                // Verified under the keyring: a registry changed without it is refused, naming the row.
                let columns = try queue.read { db in try SealedValueSearch.sealedColumns(in: db, keyring: fieldKeys) }
                let bar = ProgressBar()
                let report = try FieldRotation.rotate(queue, columns: columns, keyring: fieldKeys, batchSize: batch.batchSize) { done in
                    bar.draw(line: "re-sealed \(done) values under key \(fieldKeys.activeKeyID)")
                }
                bar.finish()
                let total = report.resealed.values.reduce(0, +)
                if output.json {
                    Output.json(["database": database, "active_key_id": "\(fieldKeys.activeKeyID)", "resealed": "\(total)", "batches": "\(report.batches)"])
                } else {
                    print("Re-sealed \(total) values of \(database) under key \(fieldKeys.activeKeyID) in \(report.batches) batches.")
                }
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Values per key id for each sealed column the database records, and each blind index: bits, rows, distinct index values, largest group.")
        @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
        @OptionGroup var key: KeyOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                let db = try key.open(database, readOnly: true)
                let recorded = try SealedColumnRegistry.columns(in: db)
                let status = try FieldRotation.status(of: SealedValueSearch.sealedColumns(in: db), in: db)
                let isRecorded = status.map { line in recorded.contains { $0.table == line.table && $0.column == line.column } }
                // An index whose table or column is gone (dropped by hand) is listed, not counted.
                let indexes = try BlindIndexRegistry.entries(in: db).map { entry in
                    IndexLine(entry, try? BlindIndexRegistry.statistics(of: entry.index, in: db))
                }
                if output.json {
                    Output.json(StatusReport(database: database, sealedColumns: zip(status, isRecorded).map(StatusLine.init), blindIndexes: indexes))
                    return
                }
                if status.isEmpty { print("\(database) holds no sealed column.") }
                for (column, recorded) in zip(status, isRecorded) {
                    print("\(column)\(recorded ? "" : " (sealed values, but not in strongroom_sealed_columns)")")
                }
                for line in indexes {
                    guard let rows = line.rows, let distinct = line.distinctIndexValues, let largest = line.largestGroup else {
                        print("blind index \(line.definition): its table or column is missing (recorded in strongroom_blind_indexes, not in the schema)")
                        continue
                    }
                    print("blind index \(line.definition): \(rows) rows, \(distinct) distinct index values, largest group \(largest)"
                          + (line.state == "building" ? "; rebuild under way (through rowid \(line.rebuiltThroughRowid.map(String.init) ?? "none")): run `strongroom fields index rebuild \(line.table).\(line.name)`" : ""))
                }
            }
        }
    }

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a key from the keyring once no sealed value of the database uses it.")
        @Option(help: ArgumentHelp("The database file.", valueName: "path")) var database: String
        @OptionGroup var key: KeyOptions
        @OptionGroup var keyring: FieldKeyOptions
        @Option(name: .customLong("key-id"), help: "The key to retire.") var keyID: UInt32
        @OptionGroup var output: OutputOptions

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                let path = try keyring.requirePath()
                if keyring.passphraseFromStandardInput && key.readsStandardInput {
                    throw StrongroomError(.misuse, "Standard input cannot hold both the database passphrase and the field keyring's; give one of them with a command.")
                }
                let db = try key.open(database, readOnly: false)
                try FieldKeyring.update(at: path, unwrappingWith: try keyring.unwrapping(timeout: key.commandTimeout)) { current in
                    try FieldRotation.retire(keyID, from: current, in: db)
                }
                if output.json {
                    Output.json(["field_keyring": path, "retired_key_id": "\(keyID)"])
                } else {
                    print("Retired key \(keyID) from \(path): no sealed value of \(database) uses it.")
                }
                if !output.json {
                    Output.error("strongroom: warning: backups and copies of \(database) made before its values left key \(keyID) still need it: keep a copy of the old keyring for as long as they are kept.")
                }
            }
        }
    }
}

/// One sealed column in `fields status --json`.
struct StatusLine: Encodable {
    let table: String
    let column: String
    let mode: String
    let valuesByKeyId: [String: Int]
    let unsealed: Int
    /// False for a column whose envelopes show it sealed, but which
    /// `strongroom_sealed_columns` does not record.
    let recorded: Bool

    init(_ status: FieldRotation.ColumnStatus, recorded: Bool) {
        self.recorded = recorded
        table = status.table
        column = status.column
        mode = status.mode.rawValue
        valuesByKeyId = Dictionary(uniqueKeysWithValues: status.valuesByKeyID.map { ("\($0)", $1) })
        unsealed = status.unsealed
    }
}

/// One blind index in `fields status`.
struct IndexLine: Encodable {
    let table: String
    let name: String
    let definition: String
    let columns: [String]
    let transformations: [String]
    let bits: Int
    let unique: Bool
    let state: String
    let rebuiltThroughRowid: Int64?
    /// Nil when the index's table or column is missing.
    let rows: Int?
    let distinctIndexValues: Int?
    let largestGroup: Int?

    init(_ entry: BlindIndexRegistry.Entry, _ statistics: BlindIndexRegistry.Statistics?) {
        table = entry.index.table
        name = entry.index.name
        definition = entry.index.description
        columns = entry.index.parts.map(\.column)
        transformations = entry.index.parts.map(\.transformationNames)
        bits = entry.index.bits
        unique = entry.index.unique
        state = entry.state.rawValue
        rebuiltThroughRowid = entry.rebuiltThrough
        rows = statistics?.rows
        distinctIndexValues = statistics?.distinctValues
        largestGroup = statistics?.largestGroup
    }
}

/// `fields status --json`.
struct StatusReport: Encodable {
    let database: String
    let sealedColumns: [StatusLine]
    let blindIndexes: [IndexLine]
}
