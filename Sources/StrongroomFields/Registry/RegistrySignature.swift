public import Strongroom
import Foundation
import StrongroomCrypto

/// The field keyring's signature over the registry: what the database
/// records of its sealed columns (``SealedColumnRegistry``, the field
/// context among them) and of its blind indexes (``BlindIndexRegistry``),
/// which the command-line tools read to decide what they seal, under which
/// mode, and which index values they write.
///
/// Whoever holds the database key can rewrite those tables: mark a
/// randomized column `indexed` with a companion column of theirs, so that
/// the next `strongroom fields rotate` writes an exact blind index of every
/// value. The signature is an HMAC-SHA256 over every row of both tables,
/// under a key derived from the field keyring (format in
/// <doc:SealedValueFormat>, "The registry's signature"), kept in the table
/// `strongroom_registry_signature`. The tools verify it before they act, and
/// a row that was rewritten, added or deleted since it was signed fails with
/// `StrongroomError.Code.untrustedRegistry` naming the row; nothing is
/// written.
///
/// The library keeps the signature current where it writes the registry
/// with the keyring (``SealedColumnRegistry/record(_:keyring:in:)``, blind
/// index changes, rotation, `import --seal`, `strongroom migrate
/// --field-keys`), and only when the registry verified before the write: a
/// change made without the keyring is never signed over by the next one.
/// Rows written without the keyring (a migration run without
/// `--field-keys`, an older Strongroom) are confirmed by the operator:
///
/// ```swift
/// try queue.write { db in try RegistrySignature.confirm(keyring, in: db) }   // strongroom fields confirm
/// ```
///
/// What it does not cover: a registry deleted whole together with its
/// signature reads as a database that never recorded one (the tools then
/// find sealed columns by their envelopes, and write no index they do not
/// know of); a registry and signature put back from an older copy of the
/// same database verify.
public enum RegistrySignature {
    package static let table = "strongroom_registry_signature"
    static let createTableSQL = "CREATE TABLE IF NOT EXISTS main.\(table) (key_id INTEGER NOT NULL, signed TEXT NOT NULL, mac BLOB NOT NULL)"
    static let info = Array("registry-signature".utf8)

    /// The tables the signature covers, and the signature's own: no
    /// trigger may write them while the library signs
    /// (`Connection.refuseWritesFromTriggers(to:)`).
    package static var protectedTables: [String] { [SealedColumnRegistry.table, BlindIndexRegistry.table, table, FieldKeyCheck.table] }

    /// One row of a registry table: the table's name, then each column as
    /// `typeof(column) ':' hex(column)` (every byte, and the storage class:
    /// a BLOB or a number planted where text was is a change too; `quote()`
    /// would stop at a NUL byte). All ASCII: compared and sorted byte for
    /// byte, where Swift's `==` would take two normalizations of a name,
    /// two names to SQLite, for one.
    struct Row: Hashable, Comparable, Codable {
        let fields: [String]

        /// The row's identity: its table, and its primary key's two columns.
        var identity: [String] { Array(fields.prefix(3)) }

        /// How a message names it: `strongroom_sealed_columns (customer, phone)`.
        var name: String {
            let key = fields.dropFirst().prefix(2).map(Self.text)
            if fields.first == SealedColumnRegistry.table, key == ["", ""] { return "\(SealedColumnRegistry.table) (the field context)" }
            return "\(fields.first ?? "?") (\(key.map { $0.debugDescription.dropFirst().dropLast() }.joined(separator: ", ")))"
        }

        static func < (a: Row, b: Row) -> Bool { a.fields.lexicographicallyPrecedes(b.fields) { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } }

        /// A field as text for a message: its bytes as UTF-8 (a NUL or any
        /// other control character escaped where it is shown).
        static func text(_ field: String) -> String {
            guard let colon = field.firstIndex(of: ":") else { return field }
            let hex = Array(field[field.index(after: colon)...].utf8)
            guard field[..<colon] != "null" else { return "NULL" }
            var bytes: [UInt8] = []
            var i = 0
            while i + 1 < hex.count {
                guard let byte = UInt8(String(decoding: hex[i...(i + 1)], as: UTF8.self), radix: 16) else { break }
                bytes.append(byte)
                i += 2
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Every row of both registry tables, sorted.
    static func liveRows(in db: Connection) throws(StrongroomError) -> [Row] {
        var rows: [Row] = []
        let tables: [(String, [String])] = [
            (SealedColumnRegistry.table, ["table_name", "column_name", "mode", "index_column"]),
            (BlindIndexRegistry.table, ["table_name", "name", "definition", "state", "rebuilt_through", "\"check\""]),
        ]
        for (table, columns) in tables where try exists(table, in: db) {
            let selected = columns.map { "typeof(\($0)) || ':' || hex(\($0))" }.joined(separator: ", ")
            for row in try db.fetchAll(sql: "SELECT \(selected) FROM main.\(table)") {
                rows.append(Row(fields: [table] + (0..<columns.count).map { (try? row.decode(String.self, at: $0)) ?? "NULL" }))
            }
        }
        return rows.sorted()
    }

    /// Whether main holds a table of that name (the registry's readers and
    /// writers all ask here).
    static func exists(_ table: String, in db: Connection) throws(StrongroomError) -> Bool {
        try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) == 1
    }

    /// Each row of the registry as the signature covers it, for the
    /// operator to read before confirming: its name, then every column.
    package static func describeRows(in db: Connection) throws(StrongroomError) -> [String] {
        let columns = [SealedColumnRegistry.table: ["mode", "index_column"], BlindIndexRegistry.table: ["definition", "state", "rebuilt_through", "check"]]
        return try liveRows(in: db).map { row in
            let names = columns[row.fields.first ?? ""] ?? []
            let values = zip(names, row.fields.dropFirst(3)).map { name, field in
                "\(name) \(field.hasPrefix("text:") ? Row.text(field).debugDescription : field.hasPrefix("null:") ? "NULL" : field)"
            }
            return "\(row.name): " + values.joined(separator: ", ")
        }
    }

    /// The MAC key of `keyID`: HKDF-SHA256(master key, salt
    /// "strongroom.field.v1", info "registry-signature" ‖ 0x00 ‖ u32(key id)), 32 bytes.
    static func mac(of keyID: UInt32, in keyring: FieldKeyring) throws(StrongroomError) -> HMACSHA256? {
        guard let master = keyring.key(keyID) else { return nil }
        var info = Self.info + [0]
        FieldEnvelope.appendBigEndian(keyID, to: &info)
        do {
            return try HMACSHA256(key: HKDF.deriveKey(from: master, salt: FieldEnvelope.label, info: info, byteCount: HMACSHA256.byteCount))
        } catch {
            throw StrongroomError(.misuse, "Deriving the registry signature key of field key \(keyID) failed: \(error.message)")
        }
    }

    /// The definition each registry table must have: the text from its
    /// first `(`, whitespace removed and ASCII letters lower-cased.
    static let definitions: [String: String] = [
        SealedColumnRegistry.table: definitionKey(SealedColumnRegistry.createTableSQL),
        BlindIndexRegistry.table: definitionKey(BlindIndexRegistry.createTableSQL),
        table: definitionKey(createTableSQL),
    ]

    static func definitionKey(_ sql: String) -> String {
        guard let open = sql.firstIndex(of: "(") else { return "" }
        return String(decoding: sql[open...].utf8.filter { ![0x20, 0x09, 0x0A, 0x0C, 0x0D].contains($0) }
            .map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Refuses a registry table that is not the table Strongroom creates: a
    /// view loaded from a row that says `table` (its rows can change between
    /// the library's check and its signature), another definition (a
    /// column that takes a default on conflict), or an index other than
    /// its primary key's (a UNIQUE index makes the library's own
    /// `INSERT OR REPLACE` delete another row), and with it a foreign key
    /// (a write to its parent, `ON UPDATE CASCADE`, would change it: SQLite
    /// codes such actions as triggers of no name, which the authorizer
    /// cannot tell from the statement's own). Each would get rows the
    /// writer did not choose signed.
    static func schemaProblem(in db: Connection) throws(StrongroomError) -> StrongroomError? {
        for (name, definition) in definitions.sorted(by: { $0.key < $1.key }) {
            let objects = try db.fetchAll(sql: "SELECT type, name, sql FROM main.sqlite_master WHERE name = ? COLLATE NOCASE", arguments: [name])
            guard !objects.isEmpty else { continue }
            let sql = (try? objects[0].decode(String.self, column: "sql")) ?? ""
            let isTable = objects.count == 1 && (try? objects[0].decode(String.self, column: "type")) == "table"
                && sql.asciiUppercased.hasPrefix("CREATE TABLE") && definitionKey(sql) == definition
            var extra: [String] = []
            if isTable {
                for index in try db.fetchAll(sql: "PRAGMA main.index_list(\(name))") where (try? index.decode(String.self, column: "origin")) != "pk" {
                    extra.append("index \((try? index.decode(String.self, column: "name")) ?? "?")")
                }
            }
            guard !isTable || !extra.isEmpty else { continue }
            let what = isTable ? "it has \(extra.joined(separator: ", "))" : "the schema holds \(objects.count == 1 ? "another object or definition" : "\(objects.count) objects") under its name"
            return StrongroomError(.untrustedRegistry, "\(name) is not the table Strongroom creates (\(what)): what the library writes into it could land otherwise than written, and be signed. Nothing was written. Rebuild it as Strongroom creates it (see SealedValueFormat), and find out who changed it.", path: db.path)
        }
        return nil
    }

    /// The signed text of `rows`: a JSON array of each row's fields.
    static func signedText(_ rows: [Row]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Arrays of strings: encoding cannot fail.
        return String(decoding: (try? encoder.encode(rows.map(\.fields))) ?? Data(), as: UTF8.self)
    }

    /// Signs the registry as it stands, under `keyring`'s active key: the
    /// operator vouches for every row (`strongroom fields confirm`). Check
    /// the rows first (`strongroom fields status`): whatever they say is
    /// what the tools will act on. Call it inside a write transaction.
    public static func confirm(_ keyring: FieldKeyring, in db: Connection) throws(StrongroomError) {
        if let problem = try schemaProblem(in: db) { throw problem }
        db.refuseWritesFromTriggers(to: protectedTables)
        let rows = try liveRows(in: db)
        let text = signedText(rows)
        let keyID = keyring.activeKeyID
        guard let mac = try mac(of: keyID, in: keyring) else { return }
        try db.execute(sql: createTableSQL)
        try db.execute(sql: "DELETE FROM main.\(table)")
        try db.execute(sql: "INSERT INTO main.\(table)(key_id, signed, mac) VALUES (?, ?, ?)",
                       arguments: [DatabaseValue.integer(Int64(keyID)), text, DatabaseValue.blob(mac.authenticationCode(for: Array(text.utf8)))])
    }

    /// Refuses a registry that differs from what `keyring` signed (a row
    /// rewritten, added or deleted), or that holds rows no signature covers,
    /// with `StrongroomError.Code.untrustedRegistry` naming them. An empty
    /// registry with no signature passes (nothing is recorded).
    public static func verify(_ keyring: FieldKeyring, in db: Connection) throws(StrongroomError) {
        if let problem = try problem(with: keyring, in: db) { throw problem }
    }

    /// The key id the registry is signed under, or nil when it is not.
    static func signingKeyID(in db: Connection) throws(StrongroomError) -> UInt32? {
        guard try exists(table, in: db) else { return nil }
        return try db.fetchOne(Int64.self, sql: "SELECT key_id FROM main.\(table) LIMIT 1").flatMap { UInt32(exactly: $0) }
    }

    /// True when ``verify(_:in:)`` would pass.
    package static func verifies(_ keyring: FieldKeyring, in db: Connection) throws(StrongroomError) -> Bool {
        try problem(with: keyring, in: db) == nil
    }

    /// Runs `change` (a write of the registry with the keyring), then signs
    /// the result, if the registry verified before it: a change made
    /// without the keyring stays unsigned, so that the tools still name it.
    ///
    /// No trigger may write the registry meanwhile (it would add the
    /// writer's rows to what is signed): a statement through which one would
    /// is refused, naming it.
    static func update<T>(_ keyring: FieldKeyring, in db: Connection, _ change: () throws -> T) throws -> T {
        db.refuseWritesFromTriggers(to: protectedTables)
        let verified = try verifies(keyring, in: db)
        let result = try change()
        if verified { try confirm(keyring, in: db) }
        return result
    }

    /// What ``verify(_:in:)`` would throw (`untrustedRegistry`), or nil;
    /// another keyring is thrown (`wrongFieldKeyring`).
    static func problem(with keyring: FieldKeyring, in db: Connection) throws(StrongroomError) -> StrongroomError? {
        // Another keyring is named as such first (its key 1 makes another MAC too).
        try FieldKeyCheck.verify(keyring, in: db)
        if let problem = try schemaProblem(in: db) { return problem }
        let live = try liveRows(in: db)
        let stored = try exists(table, in: db) ? try db.fetchAll(sql: "SELECT key_id, signed, mac FROM main.\(table)") : []
        let advice = "Nothing was written. Check the registry (strongroom fields status, or SELECT * FROM \(SealedColumnRegistry.table) and \(BlindIndexRegistry.table)); if every row is what you recorded, confirm it with `strongroom fields confirm` (RegistrySignature.confirm); otherwise find out who changed it."
        guard !stored.isEmpty else {
            if live.isEmpty { return nil }
            return StrongroomError(.untrustedRegistry, "No signature under the field keyring covers \(list(live)): they were recorded without the keyring (a migration run without --field-keys, an older Strongroom) or by someone holding only the database key. \(advice)", path: db.path)
        }
        guard stored.count == 1, let keyID = UInt32(exactly: (try? stored[0].decode(Int64.self, at: 0)) ?? -1),
              let text = try? stored[0].decode(String.self, at: 1), let code = try? stored[0].decode([UInt8].self, at: 2) else {
            return StrongroomError(.untrustedRegistry, "\(table) does not hold one signature of the form Strongroom writes: it was changed. \(advice)", path: db.path)
        }
        guard let mac = try mac(of: keyID, in: keyring) else {
            return StrongroomError(.untrustedRegistry, "The registry is signed under field key \(keyID), which this keyring does not hold (it holds \(keyring.keyIDs.map(String.init).joined(separator: ", "))): use the keyring that holds it, or check the registry and confirm it with this one. \(advice)", path: db.path)
        }
        guard ConstantTime.equal(mac.authenticationCode(for: Array(text.utf8)), code),
              let fields = try? JSONDecoder().decode([[String]].self, from: Data(text.utf8)) else {
            return StrongroomError(.untrustedRegistry, "The registry's signature does not verify under field key \(keyID) of this keyring: it was rewritten by someone without the keyring, or made with another keyring. \(advice)", path: db.path)
        }
        let signed = fields.map(Row.init)
        guard signed.sorted() != live else { return nil }
        let signedSet = Set(signed)
        let signedIdentities = Set(signed.map(\.identity)), liveIdentities = Set(live.map(\.identity))
        let changed = live.filter { !signedSet.contains($0) && signedIdentities.contains($0.identity) }
        let added = live.filter { !signedIdentities.contains($0.identity) }
        let deleted = signed.filter { !liveIdentities.contains($0.identity) }
        var parts: [String] = []
        if !changed.isEmpty { parts.append("\(list(changed)) \(changed.count == 1 ? "was" : "were") changed since \(changed.count == 1 ? "it was" : "they were") signed") }
        if !added.isEmpty { parts.append("\(list(added)) \(added.count == 1 ? "was" : "were") added without the keyring") }
        if !deleted.isEmpty { parts.append("\(list(deleted)) \(deleted.count == 1 ? "was" : "were") deleted") }
        if parts.isEmpty { parts.append("a row is there more than once") }
        return StrongroomError(.untrustedRegistry, "The registry differs from what the field keyring signed: \(parts.joined(separator: "; ")). \(advice)", path: db.path)
    }

    private static func list(_ rows: [Row]) -> String {
        let names = rows.map(\.name)
        return names.count <= 5 ? names.joined(separator: ", ") : names.prefix(5).joined(separator: ", ") + " and \(names.count - 5) more"
    }
}
