public import Strongroom
import StrongroomCrypto

/// The database's record of which field keys it knows: for each key id, a
/// check value derived from that key (HKDF-SHA256, 16 bytes: it tells keys
/// apart and gives nothing of the key), in the table `strongroom_field_keys`.
///
/// A wrong database key is refused when the database opens; a wrong field
/// keyring is refused the same way. Every connection given a keyring
/// (``Strongroom/Configuration/seal(_:indexes:keyring:context:rowKeys:signedRows:)``,
/// the migration runner's, and the tools') compares the check of each key id the keyring and the database both
/// hold, and fails with `StrongroomError.Code.wrongFieldKeyring` naming the
/// key id when one differs: another keyring that also has a key 1 is not
/// taken.
///
/// The active key is recorded where the library seals and writes: an insert
/// through `Connection.insert(_:into:)`, sealing in place,
/// rotation (each inside its own transaction). A database sealed before
/// checks were recorded learns the active key's only once a value sealed
/// under that key id opens with it. Where the database records keys but not
/// the active one, `strongroom_seal` seals nothing until it is recorded. A
/// database that records none (made with SQL alone, by `strongroom_seal` in
/// migrations) has nothing to compare with until its first such write.
public enum FieldKeyCheck {
    package static let table = "strongroom_field_keys"
    /// A key's check value, by `key_id` (one text: one cached statement).
    static let checkValueQuery = "SELECT check_value FROM main.\(table) WHERE key_id = ?"
    static let createTableSQL = "CREATE TABLE IF NOT EXISTS main.\(table) (key_id INTEGER PRIMARY KEY, check_value BLOB NOT NULL)"
    static let info = Array("key-check".utf8)

    /// The check value of `keyID` in `keyring`, or nil when it lacks it:
    /// HKDF-SHA256(master key, salt "strongroom.field.v1",
    /// info "key-check" ‖ 0x00 ‖ u32(key id)), 16 bytes.
    static func value(of keyID: UInt32, in keyring: FieldKeyring) throws(StrongroomError) -> [UInt8]? {
        guard let master = keyring.key(keyID) else { return nil }
        var info = Self.info + [0]
        FieldEnvelope.appendBigEndian(keyID, to: &info)
        do {
            let derived = try HKDF.deriveKey(from: master, salt: FieldEnvelope.label, info: info, byteCount: 16)
            return derived.withUnsafeBytes { Array($0) }
        } catch {
            throw StrongroomError(.misuse, "Deriving the check value of field key \(keyID) failed: \(error.message)")
        }
    }

    /// The check values the database records, by key id (none without the table).
    static func recorded(in db: Connection) throws(StrongroomError) -> [UInt32: [UInt8]] {
        guard try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) == 1 else { return [:] }
        var checks: [UInt32: [UInt8]] = [:]
        for row in try db.fetchAll(sql: "SELECT key_id, check_value FROM main.\(table)") {
            guard let id = UInt32(exactly: try row.decode(Int64.self, at: 0)) else { continue }
            checks[id] = try row.decode([UInt8].self, at: 1)
        }
        return checks
    }

    /// Refuses `keyring` when a key id it shares with the database's record
    /// has another key there.
    public static func verify(_ keyring: FieldKeyring, in db: Connection) throws(StrongroomError) {
        try compare(keyring, with: try recorded(in: db), in: db)
    }

    /// Refuses `keyring` when a key id it shares with `recorded` has another
    /// key, or when it shares none (a keyring that holds none of the keys the
    /// database knows is not its keyring; retiring a key deletes its record).
    static func compare(_ keyring: FieldKeyring, with recorded: [UInt32: [UInt8]], in db: Connection) throws(StrongroomError) {
        for (id, check) in recorded.sorted(by: { $0.key < $1.key }) {
            guard let ours = try value(of: id, in: keyring) else { continue }
            guard ConstantTime.equal(ours, check) else { throw wrongKeyring(id, db) }
        }
        if !recorded.isEmpty && Set(recorded.keys).isDisjoint(with: keyring.keyIDs) {
            let known = recorded.keys.sorted().map { "key \($0)" }.joined(separator: ", ")
            throw StrongroomError(.wrongFieldKeyring, "This field keyring holds none of the keys \(db.path) was sealed with (it knows \(known)). Nothing was opened or written. Use the keyring the database was sealed with.", path: db.path)
        }
    }

    /// Records the check value of `keyring`'s active key unless the database
    /// has it (then compares it). Where the database records none, a value
    /// sealed under that key id must open with it first. Call it inside the
    /// write transaction that seals under the key.
    public static func recordActiveKey(of keyring: FieldKeyring, in db: Connection) throws {
        try recordActiveKey(of: keyring, sealing: [], in: db)
    }

    /// ``recordActiveKey(of:in:)`` for a tool that acts on `columns`
    /// (found by their envelopes too): one value of each must open first.
    static func recordActiveKey(of keyring: FieldKeyring, sealing columns: [SealedColumn], in db: Connection) throws {
        guard let check = try value(of: keyring.activeKeyID, in: keyring) else { return }
        try recordActiveKey(of: keyring, check: check, declared: columns, in: db)
    }

    /// ``recordActiveKey(of:in:)`` with the active key's check value known
    /// (an insert path asks on every row: one lookup when it is recorded),
    /// and the application's own sealed columns (`declared`, with their
    /// declared row keys), whose values must open before a check is recorded.
    static func recordActiveKey(of keyring: FieldKeyring, check: [UInt8], context: FieldContext? = nil, declared: [SealedColumn] = [],
                                rowKeys: [FoldedName: [String]] = [:], in db: Connection) throws {
        if try isActiveKeyRecorded(of: keyring, check: check, in: db) { return }
        let id = keyring.activeKeyID
        let recorded = try recorded(in: db)
        try compare(keyring, with: recorded, in: db)
        if let known = recorded[id] {
            guard ConstantTime.equal(known, check) else { throw wrongKeyring(id, db) }
            return
        }
        try refuseIfAValueDoesNotOpen(keyring: keyring, context: context ?? SealedColumnRegistry.context(in: db), declared: declared, rowKeys: rowKeys, in: db)
        try db.execute(sql: createTableSQL)
        try db.execute(sql: "INSERT INTO main.\(table)(key_id, check_value) VALUES (?, ?)", arguments: [DatabaseValue.integer(Int64(id)), DatabaseValue.blob(check)])
    }

    /// True when the database records `keyring`'s active key with `check`
    /// (``recordActiveKey(of:in:)`` then writes nothing); false when it
    /// records no check value for that key id. A different check value
    /// there is a wrong keyring, refused.
    static func isActiveKeyRecorded(of keyring: FieldKeyring, check: [UInt8], in db: Connection) throws(StrongroomError) -> Bool {
        let id = keyring.activeKeyID
        guard let known = storedCheckValue(of: id, in: db) else { return false }
        guard ConstantTime.equal(known, check) else { throw wrongKeyring(id, db) }
        return true
    }

    /// The check value the database records for key `id`, or nil: no row,
    /// no table yet (`try?`), or NULL. Converted as `[UInt8]` converts any
    /// value: an edited row's TEXT as its bytes (which then do not match).
    static func storedCheckValue(of id: UInt32, in db: Connection) -> [UInt8]? {
        let arguments = StatementArguments(values: [.integer(Int64(id))])
        return (try? db.firstValue(sql: checkValueQuery, arguments: arguments)).flatMap { [UInt8].fromDatabaseValue($0) }
    }

    /// What a connection given `cipher`'s keyring does as it opens (it
    /// writes nothing): verifies the keyring, and where the database records
    /// keys but not the active one, the cipher seals nothing until a write
    /// path records it (``recordActiveKey(of:in:)``).
    static func prepare(_ cipher: FieldCipher, in db: Connection) throws(StrongroomError) {
        let recorded = try recorded(in: db)
        try compare(cipher.keyring, with: recorded, in: db)
        let id = cipher.keyring.activeKeyID
        if !recorded.isEmpty && recorded[id] == nil {
            cipher.unknownActiveKey = "\(db.path) does not know key \(id) of this field keyring yet (it records a check value for key \(recorded.keys.sorted().map(String.init).joined(separator: ", ")) only): nothing is sealed under it until it is recorded. Insert a row through Connection.insert, rotate (strongroom fields rotate), or call FieldKeyCheck.recordActiveKey(of:in:) inside a write transaction, with this keyring."
            // Until the connection records it: then its own check value, and no other.
            if let check = try value(of: id, in: cipher.keyring) {
                cipher.activeKeyRecorded = { [weak db] in
                    guard let db, let known = storedCheckValue(of: id, in: db) else { return false }
                    return ConstantTime.equal(known, check)
                }
            }
        }
    }

    /// Before a key's check is recorded: in each sealed column, declared
    /// by the application (`declared`, with its declared row keys) or
    /// recorded in the registry, one value must open under `keyring`,
    /// whatever key id its header names. A database sealed before checks
    /// were recorded, or whose checks someone holding the database key
    /// deleted (with the registry, or after rewriting the envelopes' key
    /// ids), is then taken only with the keyring its values were sealed
    /// with: a value under a key id the keyring lacks is refused, not
    /// skipped, and so is one whose bytes were made TEXT.
    ///
    /// Not covered: a database whose sealed values were all taken out (set
    /// to NULL, or to bytes of no envelope's shape) with the checks looks
    /// like a new one; what another keyring seals then is refused to the
    /// right keyring once the values are put back (`wrongFieldKeyring`,
    /// naming the key), and no value opens under the other.
    ///
    /// The columns are the caller's (the application's declarations; for
    /// the tools, the columns they act on, which include those whose values
    /// are all envelopes, ``SealedValueSearch/sealedColumns(in:keyring:)``)
    /// and the registry's. Values open bound to `context` (the
    /// application's, which the database need not record).
    static func refuseIfAValueDoesNotOpen(keyring: FieldKeyring, context: FieldContext?, declared: [SealedColumn] = [], rowKeys: [FoldedName: [String]] = [:],
                                          in db: Connection) throws {
        let cipher = FieldCipher(keyring: keyring, context: context)
        var columns = declared
        for column in try SealedColumnRegistry.columns(in: db) where !columns.contains(where: { $0.names(sameColumnAs: column) }) {
            columns.append(column)
        }
        // An envelope's shape (version 1, a known algorithm, longer than a
        // blind index), in a BLOB or in TEXT (whoever holds the database key
        // can make text of the bytes, to hide them from a look at BLOBs): a
        // column being sealed may hold plain values.
        let asBlob = "CAST(strongroom_value AS BLOB)"
        let envelope = "typeof(strongroom_value) IN ('blob', 'text') AND substr(\(asBlob), 1, 1) = x'01' AND substr(\(asBlob), 2, 1) IN (x'01', x'02') AND length(\(asBlob)) > 22"
        for column in columns where try hasColumn(column.column, of: column.table, in: db) {
            // Read with the row key; the algorithm byte then says whether the
            // value is bound to it (the registry's mode is not trusted here).
            let key = try rowKeys[column.table.sqliteFolded] ?? PrimaryKeyColumns.read(column.table, in: db).map(\.name)
            guard let row = try StoredValues.rows(of: column.table, column: column.column, key: key, where: envelope, asBytes: true, limit: 1, in: db).first,
                  case .blob(let bytes) = row.stored else { continue }
            let randomized = bytes[1] == FieldEnvelope.Algorithm.aes256GCM.rawValue
            let keyID = bytes[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard keyring.key(keyID) != nil else {
                throw StrongroomError(.wrongFieldKeyring, "\(column.table).\(column.column) holds values sealed under field key \(keyID), which this keyring does not hold (it holds \(keyring.keyIDs.map(String.init).joined(separator: ", "))): it is not the keyring \(db.path) was sealed with, or someone rewrote the values' headers. Nothing was recorded or sealed. Use the keyring the database was sealed with.", path: db.path)
            }
            do {
                _ = try cipher.open(row.stored, table: column.table, column: column.column, rowKey: randomized ? row.rowKey : [], mode: randomized ? .randomized : .deterministic)
            } catch {
                throw wrongKeyring(keyID, db)
            }
        }
    }

    /// Whether `table` of main has a column `column` (names as SQLite folds them).
    private static func hasColumn(_ column: String, of table: String, in db: Connection) throws(StrongroomError) -> Bool {
        guard try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", arguments: [table]) == 1 else { return false }
        return try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(table)))")
            .contains { (try? $0.decode(String.self, column: "name"))?.sqliteFolded == column.sqliteFolded }
    }

    static func wrongKeyring(_ keyID: UInt32, _ db: Connection) -> StrongroomError {
        StrongroomError(.wrongFieldKeyring, "This field keyring is not the one \(db.path) was sealed with: its key \(keyID) differs from the key \(keyID) the database knows. Nothing was opened or written. Use the keyring the database was sealed with (another keyring that also has a key \(keyID) is not it).", path: db.path)
    }
}
