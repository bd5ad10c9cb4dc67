public import Strongroom
import Foundation
import StrongroomCrypto

/// The blind indexes a database records (table `strongroom_blind_indexes`),
/// so that the CLI finds them with the keyring alone: `fields status`,
/// `fields plan --index`, `fields index rebuild`, `fields rotate`.
///
/// Each row holds the definition (as JSON), its state (`ready`, or
/// `building` with the rowid the rebuild has reached) and a check (a MAC of
/// the definition under the index's own key, the older format's). The
/// registry's signature (``RegistrySignature``) covers every column of every
/// row: a database-key holder who rewrites a definition (a 16-bit index
/// made 128 bits, so that a rebuild would reveal which rows share a value)
/// or its state makes the tools that read it with the keyring refuse it,
/// naming the index. A definition a migration recorded without the keyring
/// is refused until `strongroom fields confirm` (or `migrate --field-keys`).
///
/// Each ``SealingMode/indexed`` column's own index is listed too, from
/// `strongroom_sealed_columns`: it needs no row here.
public enum BlindIndexRegistry {
    package static let table = "strongroom_blind_indexes"
    package static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS main.\(table) (
          table_name TEXT NOT NULL, name TEXT NOT NULL, definition TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'ready',
          rebuilt_through INTEGER, "check" BLOB,
          PRIMARY KEY (table_name, name))
        """

    /// Where an index stands.
    public enum State: String, Sendable, Codable {
        /// Every row's value is computed with the recorded definition.
        case ready
        /// A rebuild is under way (or was killed): rows past ``Entry/rebuiltThrough`` may hold stale values.
        case building
    }

    /// One recorded index.
    public struct Entry: Sendable, Hashable {
        /// The definition.
        public let index: BlindIndex
        /// Ready, or being rebuilt.
        public let state: State
        /// While building: the largest rowid whose value is rebuilt (nil: none yet).
        public let rebuiltThrough: Int64?
        /// Whether the registry's signature, verified under the keyring
        /// given, covers the entry; false when read without a keyring.
        public let verified: Bool
        /// The key the check was made under; nil without one.
        public let checkKeyID: UInt32?
    }

    /// The recorded indexes, the indexed columns' own first, by table and name.
    ///
    /// With a `keyring`, the registry must verify first
    /// (``RegistrySignature/verify(_:in:)``: `StrongroomError.Code.untrustedRegistry`
    /// names a row changed, added or deleted without it), and every entry
    /// is ``Entry/verified``. Without one, nothing is verified: every
    /// entry's ``Entry/verified`` is false.
    public static func entries(in db: Connection, keyring: FieldKeyring? = nil) throws -> [Entry] {
        if let keyring { try RegistrySignature.verify(keyring, in: db) }
        var entries = try SealedColumnRegistry.columns(in: db).compactMap(\.columnIndex)
            .map { Entry(index: $0, state: .ready, rebuiltThrough: nil, verified: keyring != nil, checkKeyID: nil) }
        guard try exists(in: db) else { return entries }
        let cipher = try keyring.map { try FieldCipher(keyring: $0, contextRecordedIn: db) }
        for row in try db.fetchAll(sql: "SELECT table_name, name, definition, state, rebuilt_through, \"check\" FROM main.\(table) ORDER BY table_name, name") {
            let name = try row.decode(String.self, column: "name"), tableName = try row.decode(String.self, column: "table_name")
            let index: BlindIndex
            do {
                index = try JSONDecoder().decode(BlindIndex.self, from: Data(try row.decode(String.self, column: "definition").utf8))
            } catch {
                throw FieldError(.misuse, "\(table) records blind index \(tableName).\(name) with a definition this Strongroom cannot read (\(error)); it is damaged, or newer than this Strongroom.", table: tableName)
            }
            guard index.table.sqliteFolded == tableName.sqliteFolded, index.name.sqliteFolded == name.sqliteFolded else {
                throw FieldError(.misuse, "\(table) records blind index \(tableName).\(name) with the definition of \(index.table).\(index.name): the row was changed.", table: tableName)
            }
            let stateName = try row.decode(String.self, column: "state")
            guard let state = State(rawValue: stateName) else {
                throw FieldError(.misuse, "\(table) records blind index \(tableName).\(name) in an unknown state '\(stateName)'.", table: tableName)
            }
            let check = try row.decode([UInt8]?.self, column: "check")
            // The registry's signature (verified above) covers the row; the
            // definition's own check is the older format's, kept for its key id.
            let verified = cipher != nil
            let checkKeyID = check.flatMap { $0.count == 20 ? UInt32($0[0]) << 24 | UInt32($0[1]) << 16 | UInt32($0[2]) << 8 | UInt32($0[3]) : nil }
            entries.append(Entry(index: index, state: state, rebuiltThrough: try row.decode(Int64?.self, column: "rebuilt_through"), verified: verified, checkKeyID: checkKeyID))
        }
        return entries
    }

    /// What an index's stored values show (what a database-key holder sees).
    public struct Statistics: Sendable, Hashable, Codable {
        /// Rows with an index value.
        public let rows: Int
        /// Distinct index values.
        public let distinctValues: Int
        /// The most rows sharing one index value.
        public let largestGroup: Int
    }

    /// Counts the stored values of `index` (through its SQL index).
    public static func statistics(of index: BlindIndex, in db: Connection) throws(StrongroomError) -> Statistics {
        let column = SQLScript.quotedIdentifier(index.name), table = "main." + SQLScript.quotedIdentifier(index.table)
        let row = try db.fetchOne(sql: "SELECT count(*) AS n, coalesce(max(c), 0) AS largest, coalesce(sum(c), 0) AS r FROM (SELECT count(*) AS c FROM \(table) WHERE \(column) IS NOT NULL GROUP BY \(column))")
        return Statistics(rows: try row?.decode(Int.self, column: "r") ?? 0, distinctValues: try row?.decode(Int.self, column: "n") ?? 0,
                          largestGroup: try row?.decode(Int.self, column: "largest") ?? 0)
    }

    /// The recorded index `name` of `table`, or nil.
    public static func entry(_ name: String, of table: String, in db: Connection, keyring: FieldKeyring? = nil) throws -> Entry? {
        try entries(in: db, keyring: keyring).first { $0.index.table.sqliteFolded == table.sqliteFolded && $0.index.name.sqliteFolded == name.sqliteFolded }
    }

    /// Records `index` (replacing what was recorded under its name), with
    /// a check under the keyring's active key.
    public static func record(_ index: BlindIndex, state: State, rebuiltThrough: Int64? = nil, keyring: FieldKeyring, in db: Connection) throws {
        try record(index, state: state, rebuiltThrough: rebuiltThrough, cipher: try FieldCipher(keyring: keyring, contextRecordedIn: db), in: db)
    }

    /// The same, with a cipher already made for the database.
    static func record(_ index: BlindIndex, state: State, rebuiltThrough: Int64? = nil, cipher: FieldCipher, in db: Connection) throws {
        try index.validate()
        let keyring = cipher.keyring
        try RegistrySignature.update(keyring, in: db) {
            try db.execute(sql: createTableSQL)
            let definition = definitionJSON(index)
            try db.execute(sql: "INSERT OR REPLACE INTO main.\(table)(table_name, name, definition, state, rebuilt_through, \"check\") VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [index.table, index.name, definition, state.rawValue, rebuiltThrough, try check(of: index, cipher: cipher, keyID: keyring.activeKeyID)])
        }
    }

    /// The definition as recorded: JSON with sorted keys.
    package static func definitionJSON(_ index: BlindIndex) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings, integers, booleans and arrays of them: encoding cannot fail.
        return String(decoding: (try? encoder.encode(index)) ?? Data(), as: UTF8.self)
    }

    /// Moves a recorded index's rebuild on to `rowid`, or marks it ready (nil).
    /// (The registry's signature follows each change: ``RegistrySignature/update(_:in:_:)``.)
    static func advance(_ index: BlindIndex, to rowid: Int64?, keyring: FieldKeyring, in db: Connection) throws {
        try RegistrySignature.update(keyring, in: db) {
            try db.execute(sql: "UPDATE main.\(table) SET state = ?, rebuilt_through = ? WHERE table_name = ? AND name = ?",
                           arguments: [rowid == nil ? State.ready.rawValue : State.building.rawValue, rowid, index.table, index.name])
        }
    }

    /// Marks a recorded index as being rebuilt from its first row.
    static func markBuilding(_ index: BlindIndex, keyring: FieldKeyring, in db: Connection) throws {
        try RegistrySignature.update(keyring, in: db) {
            try db.execute(sql: "UPDATE main.\(table) SET state = ?, rebuilt_through = NULL WHERE table_name = ? AND name = ?",
                           arguments: [State.building.rawValue, index.table, index.name])
        }
    }

    /// Forgets a recorded index (not an indexed column's own).
    static func remove(_ index: BlindIndex, keyring: FieldKeyring, in db: Connection) throws {
        guard try exists(in: db) else { return }
        try RegistrySignature.update(keyring, in: db) {
            try db.execute(sql: "DELETE FROM main.\(table) WHERE table_name = ? AND name = ?", arguments: [index.table, index.name])
        }
    }

    private static func exists(in db: Connection) throws(StrongroomError) -> Bool {
        try RegistrySignature.exists(table, in: db)
    }

    private static let checkLabel = Array("strongroom blind index definition check".utf8)

    /// key id (4 bytes) ‖ HMAC(the index's key under it, label)[0..<16].
    static func check(of index: BlindIndex, cipher: FieldCipher, keyID: UInt32) throws(FieldError) -> [UInt8] {
        let mac = try cipher.indexMAC(for: index, keyID: keyID)
        var out = [UInt8]()
        FieldEnvelope.appendBigEndian(keyID, to: &out)
        return out + mac.authenticationCode(for: checkLabel).prefix(16)
    }
}
