import Foundation
public import Strongroom

/// An app's upgrade, tested as its users will live it: a database built at
/// an older version from the migrations, filled with the app's rows,
/// migrated to the latest version, validated against the model, compared
/// with a database built from zero, and checked for lost rows.
///
/// ```swift
/// @Test func upgradingFromVersion3KeepsEveryCustomer() throws {
///     let report = try UpgradeTest(migrator: try Migrator(directory: "Migrations"), model: AppModel.schema)
///         .run(from: 3) { db in
///             try db.execute(sql: "INSERT INTO customer(name, email) VALUES (?, ?)", arguments: ["Ada", "ada@example.com"])
///         }
///     #expect(report.rowCounts["customer"] == 1)
/// }
/// ```
///
/// The database is a real encrypted file in a temporary directory, removed
/// afterwards. A migration that seals a column with `strongroom_seal` needs
/// the migrator's field keyring (`migrator.fieldKeyring`), which lends it
/// the sealed-column functions for the run.
public struct UpgradeTest {
    /// The migrations, all of them.
    public let migrator: Migrator
    /// The model the latest version must match.
    public let model: DatabaseSchema
    /// The database's configuration, encrypted with a fresh key by default.
    public var configuration: Configuration
    /// Tables the migrations may empty or drop (a table that is gone has
    /// lost its rows); any other table that ends with fewer rows fails the test.
    public var tablesThatMayLoseRows: Set<String> = []

    /// An upgrade test of `migrator`'s migrations against `model`.
    public init(migrator: Migrator, model: DatabaseSchema, configuration: Configuration = Configuration(key: .generate())) {
        self.migrator = migrator
        self.model = model
        self.configuration = configuration
    }

    /// What an upgrade did.
    public struct Report: Sendable {
        /// The version the database was built at, and the version it reached.
        public let fromVersion: Int, toVersion: Int
        /// The rows of each table after filling, and after migrating.
        public let rowCountsBefore: [String: Int], rowCounts: [String: Int]
    }

    /// Why an upgrade test failed: a sentence, and the differences or tables concerned.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// `lost_rows`, `differs_from_new`, or `indistinct_names` (two
        /// tables whose names SQLite keeps apart and Swift's strings take
        /// for one: the test counts rows by name).
        public let code: String
        /// What went wrong and what to look at.
        public let description: String
    }

    /// Builds a database at `version`, fills it with `fill`, migrates it to
    /// the latest version, and checks it; then runs `check` on it.
    ///
    /// - Throws: ``SchemaMismatch`` when the upgraded schema is not the
    ///   model; ``Failure`` when it is not what a database built from zero
    ///   gets (`differs_from_new`), when a table has fewer rows than
    ///   before (`lost_rows`), or when two tables' names are one to Swift's
    ///   strings (`indistinct_names`); `MigrationError` when a migration fails.
    @discardableResult
    public func run(from version: Int, fill: (Connection) throws -> Void, check: (Connection) throws -> Void = { _ in }) throws -> Report {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strongroom-upgrade-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let db = try Connection(path: directory + "/upgrade.db", configuration: configuration)
        defer { db.close() }
        try migrator.migrate(db, to: version)
        try db.inTransaction { db in try fill(db) }
        let before = try Self.rowCounts(db)
        try migrator.migrate(db)
        try model.validate(db)

        let fresh = try Connection(path: directory + "/new.db", configuration: configuration)
        defer { fresh.close() }
        try migrator.migrate(fresh)
        let differences = try SchemaSnapshot(db).differences(from: SchemaSnapshot(fresh))
        if !differences.isEmpty {
            throw Failure(code: "differs_from_new", description: "The database upgraded from version \(version) is not what a new database gets from the same migrations: \(differences.joined(separator: "; ")).")
        }
        let after = try Self.rowCounts(db)
        // Tables matched as SQLite matches names (ASCII case folded, every
        // other scalar exact): a String key took KELVIN SIGN + `ept` for a
        // dropped `Kept`, and missed `Kept` rebuilt as `KEPT`.
        let allowed = Set(tablesThatMayLoseRows.map(\.sqliteFolded))
        let afterByName = Dictionary(after.map { ($0.key.sqliteFolded, $0.value) }, uniquingKeysWith: max)
        let lost = before.keys.sorted().filter { table in (afterByName[table.sqliteFolded] ?? 0) < before[table]! && !allowed.contains(table.sqliteFolded) }
        if !lost.isEmpty {
            throw Failure(code: "lost_rows", description: "Upgrading from version \(version) lost rows: "
                + lost.map { "\($0) had \(before[$0]!), has \(afterByName[$0.sqliteFolded] ?? 0)\(afterByName[$0.sqliteFolded] == nil ? " (dropped)" : "")" }.joined(separator: "; ")
                + "; if that is intended, name the table in tablesThatMayLoseRows.")
        }
        try check(db)
        return Report(fromVersion: version, toVersion: try migrator.currentVersion(db), rowCountsBefore: before, rowCounts: after)
    }

    /// Each table's rows, by name. Two names SQLite keeps apart that Swift's
    /// strings take for one (`Kept` and KELVIN SIGN + `ept`) cannot both be
    /// keys: a ``Failure`` (`indistinct_names`), not a crash.
    static func rowCounts(_ db: Connection) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in try db.tableRowCounts() {
            if let other = counts.index(forKey: table.name).map({ counts[$0].key }) {
                throw Failure(code: "indistinct_names", description: "Tables \(other) and \(table.name) have names SQLite keeps apart but Swift's strings take for one (they differ by characters Unicode calls equivalent, such as KELVIN SIGN and K): the upgrade test counts rows by name and cannot tell them apart. Rename one of them.")
            }
            counts[table.name] = table.rowCount
        }
        return counts
    }
}
