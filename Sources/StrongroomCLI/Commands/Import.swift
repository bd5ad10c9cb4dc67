import ArgumentParser
import Strongroom
import StrongroomFields

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt an existing plaintext SQLite database into a new encrypted file, verified table by table."
    )

    @Option(help: ArgumentHelp("The plaintext SQLite database (read, never modified).", valueName: "path"))
    var from: String

    @Option(help: ArgumentHelp("The new encrypted database (must not exist).", valueName: "path"))
    var database: String

    @OptionGroup var fieldKeys: FieldKeyOptions

    @Option(help: ArgumentHelp("Seal a column while importing: TABLE.COLUMN[:randomized|deterministic|indexed] (default randomized; indexed adds COLUMN_blind_index). Repeat for more.", valueName: "spec"))
    var seal: [String] = []

    @Option(help: ArgumentHelp("Add a blind index while importing (after --seal): \(BlindIndexSpec.syntax). Repeat for more.", valueName: "spec"))
    var index: [String] = []

    @Option(name: .customLong("field-context"), help: ArgumentHelp("Bind the sealed values to this tenant or database identifier too (recorded in the database): a value copied into another tenant's database does not open there.", valueName: "id"))
    var fieldContext: String?

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if key.cipherCompatibility != nil {
            throw ValidationError("--cipher-compatibility does not apply here: import writes a new database in the linked SQLCipher's own format.")
        }
        if !seal.isEmpty && !fieldKeys.isGiven {
            throw ValidationError("--seal needs the field keyring: --field-keys PATH (create one with `strongroom keygen --field --out PATH`), --field-keys-credential NAME or --field-keys-command CMD.")
        }
        if !index.isEmpty && seal.isEmpty {
            throw ValidationError("--index goes with --seal: a blind index covers sealed columns.")
        }
        for spec in index { _ = try BlindIndexSpec.parse(spec) }
        if fieldContext != nil && seal.isEmpty {
            throw ValidationError("--field-context goes with --seal: it binds the sealed values.")
        }
        if let fieldContext {
            do { _ = try FieldContext(fieldContext) } catch { throw ValidationError("--field-context: \(error.message)") }
        }
        let columns = try seal.map(Self.sealedColumn)
        // SQLite compares names without ASCII case: Email and EMAIL are one column.
        var seen: Set<[FoldedName]> = []
        for column in columns where !seen.insert([column.table.sqliteFolded, column.column.sqliteFolded]).inserted {
            throw ValidationError("--seal names \(column.table).\(column.column) twice (names are compared without case, as SQLite compares them); give each column once, with its mode.")
        }
    }

    /// `TABLE.COLUMN[:mode]`.
    static func sealedColumn(_ spec: String) throws -> SealedColumn {
        let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
        let names = parts[0].split(separator: ".", maxSplits: 1).map(String.init)
        guard names.count == 2, !names[0].isEmpty, !names[1].isEmpty else {
            throw ValidationError("--seal \(spec): write TABLE.COLUMN[:randomized|deterministic|indexed].")
        }
        let mode = parts.count == 2 ? SealingMode(rawValue: parts[1].lowercased()) : .randomized
        guard let mode else {
            throw ValidationError("--seal \(spec): the mode is randomized, deterministic or indexed.")
        }
        return SealedColumn(table: names[0], column: names[1], mode: mode, indexColumn: mode == .indexed ? names[1] + "_blind_index" : nil)
    }

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let bar = ProgressBar()
            defer { bar.finish() }
            let columns = try seal.map(Self.sealedColumn)
            let indexes = try index.map(BlindIndexSpec.parse)
            var finishing: ((Connection) throws(StrongroomError) -> Void)?
            if !columns.isEmpty, let keyring = try fieldKeys.load(key: key) {
                let context = try fieldContext.map { try FieldContext($0) }
                let path = database
                finishing = { (db: Connection) throws(StrongroomError) -> Void in
                    try FieldErrors.asStrongroomErrors(path: path) {
                        try db.inTransaction(.immediate) { db in
                            if let context { try SealedColumnRegistry.record(context: context, keyring: keyring, in: db) }
                            try ColumnSealing.sealInPlace(columns, keyring: keyring, in: db)
                            for index in indexes { try BlindIndexRebuild.addInPlace(index, keyring: keyring, in: db) }
                        }
                    }
                }
            }
            let report = try PlaintextConversion.importPlaintext(from: from, to: database, key: try key.loadKey(),
                                                                 progress: { bar.handle($0) }, finishing: finishing)
            bar.finish()
            Conversion.print(report, verb: "Encrypted", from: from, to: database, json: output.json)
            if !columns.isEmpty && !output.json {
                print("Sealed with \(fieldKeys.name): " + columns.map { "\($0.table).\($0.column) (\($0.mode.rawValue))" }.joined(separator: ", ") + ".")
                for index in indexes { print("Blind index \(index).") }
            }
        }
    }
}
