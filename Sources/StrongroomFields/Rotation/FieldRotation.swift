public import Strongroom

/// Key rotation for sealed columns: status per key id, re-sealing under the
/// active key in batches, and the check before a key is retired.
///
/// ```swift
/// let (keyring, id) = try FieldKeyring.load(from: path).addingKey()
/// try keyring.activating(id).write(to: path, replacing: true)
/// let report = try FieldRotation.rotate(queue, columns: columns, keyring: try keyring.activating(id)) { progress in … }
/// ```
public enum FieldRotation {
    /// How many values of one sealed column are under each key.
    public struct ColumnStatus: Sendable, Hashable, Codable {
        /// The table.
        public let table: String
        /// The sealed column.
        public let column: String
        /// How its values are sealed.
        public let mode: SealingMode
        /// Values per key id.
        public let valuesByKeyID: [UInt32: Int]
        /// Values that are not envelopes (plaintext left behind, or damage).
        public let unsealed: Int
    }

    /// Values per key id for each of `columns`.
    public static func status(of columns: [SealedColumn], in db: Connection) throws(StrongroomError) -> [ColumnStatus] {
        var result: [ColumnStatus] = []
        for column in columns {
            let name = SQLScript.quotedIdentifier(column.column), table = "main." + SQLScript.quotedIdentifier(column.table)
            var byKey: [UInt32: Int] = [:]
            var unsealed = 0
            for row in try db.fetchAll(sql: """
                SELECT CASE WHEN typeof(\(name)) = 'blob' AND length(\(name)) >= 6 AND substr(\(name), 1, 1) = x'01' THEN substr(\(name), 3, 4) END AS key_id,
                       count(*) AS n
                  FROM \(table) WHERE \(name) IS NOT NULL GROUP BY 1
                """) {
                let count = try row.decode(Int.self, column: "n")
                if let bytes = try row.decode([UInt8]?.self, column: "key_id"), bytes.count == 4 {
                    byKey[bytes.reduce(0) { $0 << 8 | UInt32($1) }, default: 0] += count
                } else {
                    unsealed += count
                }
            }
            result.append(ColumnStatus(table: column.table, column: column.column, mode: column.mode, valuesByKeyID: byKey, unsealed: unsealed))
        }
        return result
    }

    /// What a rotation did.
    public struct Report: Sendable {
        /// Values re-sealed under the active key, per "table.column".
        public let resealed: [String: Int]
        /// Batches committed.
        public let batches: Int
    }

    /// Re-seals every value of `columns` that is not under the keyring's
    /// active key, `batchSize` rows at a time, each batch its own IMMEDIATE
    /// transaction. Killed at any moment, it loses nothing: a batch commits
    /// whole or not at all, and a rerun finds what is left by the key id in
    /// each envelope. Blind indexes are recomputed with the new key: each
    /// indexed column's own, and every index ``BlindIndexRegistry`` records
    /// with a value under another key (rebuilt whole, with ``BlindIndexRebuild``;
    /// counted in ``Report/resealed`` under "table.index").
    ///
    /// `signedRows` are the app's ``SignedRow`` declarations: a row of such
    /// a table is signed again under the active key as its values are
    /// re-sealed, after its signature verifies over what it held (a row
    /// someone changed is refused, not signed over). A table whose rows hold
    /// signatures and that `signedRows` does not declare is refused before
    /// anything is re-sealed: re-sealing would break its signatures.
    ///
    /// `progress` is called after each batch with the values re-sealed so far.
    public static func rotate(_ queue: DatabaseQueue, columns: [SealedColumn], keyring: FieldKeyring, signedRows: [SignedRow] = [], batchSize: Int = 1000,
                              progress: ((Int) -> Void)? = nil) throws -> Report {
        let cipher = try queue.read { db in try FieldCipher(keyring: keyring, contextRecordedIn: db) }
        let signing = try signingLayouts(signedRows, columns: columns, cipher: cipher, in: queue)
        // The registry names the blind indexes rebuilt below: refused if
        // someone without the keyring changed it.
        try queue.read { db in try RegistrySignature.verify(keyring, in: db) }
        // The columns it re-seals are checked too (found by their envelopes
        // where the registry forgot them): one value of each must open first.
        try queue.write { db in try FieldKeyCheck.recordActiveKey(of: keyring, sealing: columns, in: db) }
        let active = keyring.activeKeyID
        let activeBytes: [UInt8] = [UInt8(active >> 24 & 0xFF), UInt8(active >> 16 & 0xFF), UInt8(active >> 8 & 0xFF), UInt8(active & 0xFF)]
        var resealed: [String: Int] = [:]
        var batches = 0
        var total = 0
        for column in columns {
            let name = SQLScript.quotedIdentifier(column.column), table = "main." + SQLScript.quotedIdentifier(column.table)
            let keyColumns = try queue.read { db in try primaryKey(of: column.table, in: db) }
            if column.mode != .deterministic && keyColumns.isEmpty {
                throw FieldError(.misuse, "\(column.table) has no declared PRIMARY KEY; its sealed values cannot be bound to rows.", table: column.table, column: column.column)
            }
            // The rowid, under a name no column hides (a column may be called
            // rowid); nil for a WITHOUT ROWID table or when all three are taken.
            let rowidName = try queue.read { db in try db.rowidName(ofTable: column.table) }
            let usesRowid = rowidName != nil
            let rowid = rowidName ?? "rowid"
            let selectedKeys = keyColumns.map(SQLScript.quotedIdentifier).joined(separator: ", ")
            let stale = "typeof(\(name)) = 'blob' AND substr(\(name), 3, 4) <> ?1"
            var lastRowid: Int64?
            while true {
                let count: Int = try queue.write { db in
                    let sql = usesRowid
                        ? "SELECT \(rowid) AS strongroom_rowid\(selectedKeys.isEmpty ? "" : ", " + selectedKeys), +\(name) AS strongroom_stored FROM \(table) WHERE \(stale) AND (?2 IS NULL OR \(rowid) > ?2) ORDER BY \(rowid) LIMIT ?3"
                        : "SELECT \(selectedKeys.isEmpty ? "" : selectedKeys + ", ")+\(name) AS strongroom_stored FROM \(table) WHERE \(stale) LIMIT ?3"
                    let rows = try db.fetchAll(sql: sql, arguments: [activeBytes, lastRowid, batchSize])
                    for row in rows {
                        let rowKey = try keyColumns.map { key throws in try row.decode(DatabaseValue.self, column: key) }
                        let stored = try row.decode(DatabaseValue.self, column: "strongroom_stored")
                        let value = try cipher.open(stored, table: column.table, column: column.column, rowKey: rowKey, mode: column.mode)
                        let sealed = try cipher.seal(value, table: column.table, column: column.column, rowKey: rowKey, mode: column.mode)
                        let target: String
                        let targetArguments: [any DatabaseValueConvertible]
                        if usesRowid {
                            target = "\(rowid) = ?"
                            let current = try row.decode(Int64.self, column: "strongroom_rowid")
                            targetArguments = [current]
                            lastRowid = max(lastRowid ?? current, current)
                        } else {
                            target = keyColumns.map { "\(SQLScript.quotedIdentifier($0)) IS ?" }.joined(separator: " AND ")
                            targetArguments = rowKey.map { $0 as any DatabaseValueConvertible }
                        }
                        var assignments = "\(name) = ?"
                        var arguments: [any DatabaseValueConvertible] = [sealed]
                        if column.mode == .indexed, let indexColumn = column.indexColumn {
                            assignments += ", \(SQLScript.quotedIdentifier(indexColumn)) = ?"
                            arguments.append(try cipher.blindIndex(value, table: column.table, column: column.column))
                        }
                        if let layout = signing[column.table.sqliteFolded] {
                            // The row's signature over what it holds, checked, then over the new envelope.
                            let signature = try resign(layout, cipher: cipher, in: db, where: target, targetArguments, rowKey: rowKey, replacing: column.column, with: sealed)
                            assignments += ", \(SQLScript.quotedIdentifier(layout.signatureColumn)) = ?"
                            arguments.append(signature)
                        }
                        try db.execute(sql: "UPDATE \(table) SET \(assignments) WHERE \(target)", arguments: StatementArguments(arguments + targetArguments))
                    }
                    return rows.count
                }
                if count == 0 { break }
                batches += 1
                total += count
                resealed["\(column.table).\(column.column)", default: 0] += count
                progress?(total)
                if count < batchSize && usesRowid { break }
            }
        }
        // Signatures still under another key (a row whose sealed values
        // were all under the active key, or NULL): signed again.
        for layout in signing.values {
            let count = try resignStale(layout, cipher: cipher, in: queue, batchSize: batchSize)
            if count > 0 { resealed["\(layout.table).\(layout.signatureColumn)", default: 0] += count }
        }
        // The recorded blind indexes beyond the columns' own: rebuilt under
        // the active key where a value is under another (resumable too).
        let indexes = try queue.read { db in try BlindIndexRegistry.entries(in: db, keyring: keyring).filter { !$0.index.isColumnIndex } }
        for entry in indexes {
            let column = SQLScript.quotedIdentifier(entry.index.name), table = "main." + SQLScript.quotedIdentifier(entry.index.table)
            let stale = try queue.read { db in
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM (SELECT 1 FROM \(table) WHERE \(column) IS NOT NULL AND substr(\(column), 1, 4) <> ? LIMIT 1)", arguments: [activeBytes]) == 1
            }
            // The definition's check moves to the active key too, so that the old key can be retired.
            if entry.verified, entry.checkKeyID != active {
                try queue.write { db in try BlindIndexRegistry.record(entry.index, state: entry.state, rebuiltThrough: entry.rebuiltThrough, keyring: keyring, in: db) }
            }
            guard stale || entry.state == .building else { continue }
            let report = try BlindIndexRebuild.rebuild(entry.index.name, of: entry.index.table, in: queue, keyring: keyring, batchSize: batchSize)
            batches += report.batches
            resealed["\(entry.index.table).\(entry.index.name)", default: 0] += report.rows
        }
        // The registry's signature moves to the active key too, so that the
        // old key can be retired.
        try queue.write { db in try RegistrySignature.update(keyring, in: db) {} }
        return Report(resealed: resealed, batches: batches)
    }

    /// The keyring without `keyID`, after checking in the data itself
    /// that no value anywhere in the database uses it: every column of every
    /// table is searched for envelopes and blind indexes under it
    /// (``SealedValueSearch``), whatever the registry of sealed columns says
    /// (anyone with the database key can edit that). Then every envelope
    /// found must open under the keys that stay: a header names its key id
    /// in plain, and one rewritten to name another key would make a key in
    /// use look unused (the value opens under neither, and once the key is
    /// retired, putting the header back no longer helps).
    ///
    /// The database's check value of the retired key (``FieldKeyCheck``) is
    /// deleted when `db` may write, so that a key given the same id later is
    /// not refused. Backups and copies of the database may still hold values
    /// under the retired key: keep a copy of the old keyring as long as they
    /// are kept.
    public static func retire(_ keyID: UInt32, from keyring: FieldKeyring, in db: Connection) throws -> FieldKeyring {
        try FieldKeyCheck.verify(keyring, in: db)
        let findings = try SealedValueSearch.findings(in: db)
        let inUse = findings.filter { $0.count(underKey: keyID) > 0 }
        // Truncated blind indexes are shorter than the search recognizes: the recorded ones are counted here.
        let keyBytes: [UInt8] = [UInt8(keyID >> 24 & 0xFF), UInt8(keyID >> 16 & 0xFF), UInt8(keyID >> 8 & 0xFF), UInt8(keyID & 0xFF)]
        var indexPlaces: [String] = []
        for entry in try BlindIndexRegistry.entries(in: db) where !entry.index.isColumnIndex {
            let count = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.\(SQLScript.quotedIdentifier(entry.index.table)) WHERE substr(\(SQLScript.quotedIdentifier(entry.index.name)), 1, 4) = ?", arguments: [keyBytes]) ?? 0
            if count > 0 { indexPlaces.append("\(entry.index.table).\(entry.index.name): \(count) blind indexes") }
        }
        guard inUse.isEmpty && indexPlaces.isEmpty else {
            let places = (inUse.map { finding in
                let blind = finding.blindIndexesByKeyID[keyID] ?? 0, signatures = finding.rowSignaturesByKeyID[keyID] ?? 0
                let sealed = finding.count(underKey: keyID) - blind - signatures
                return "\(finding.table).\(finding.column): " + [sealed > 0 ? "\(sealed) sealed values" : nil, blind > 0 ? "\(blind) blind indexes" : nil,
                                                                 signatures > 0 ? "\(signatures) row signatures" : nil]
                    .compactMap { $0 }.joined(separator: ", ")
            } + indexPlaces).joined(separator: "; ")
            throw FieldError(.keyring, "Key \(keyID) is still in use (\(places)); nothing was retired. Re-seal the values under the active key first (`strongroom fields rotate`; row signatures from the app, FieldRotation.rotate(…, signedRows:)); blind indexes are recomputed for the indexed columns strongroom_sealed_columns records, so record a column whose record is missing again before rotating.")
        }
        let staying = try keyring.removingKey(keyID)
        let unopened = try envelopesThatDoNotOpen(under: staying, findings: findings, in: db)
        guard unopened.isEmpty else {
            let places = unopened.map { "\($0.key): \($0.value.count) (row \($0.value.first!))" }.sorted().joined(separator: "; ")
            throw FieldError(.keyring, "Sealed values do not open under the keys that would stay (\(places)): their headers may have been rewritten to name another key, or they were sealed with another keyring. Nothing was retired: key \(keyID) may be the one they need. Check them with `strongroom verify --field-keys`, and restore them from a backup if they were changed.")
        }
        // The registry's signature would not verify without the key.
        if let signer = try RegistrySignature.signingKeyID(in: db), signer == keyID {
            throw FieldError(.keyring, "Key \(keyID) signs the registry of \(db.path) (RegistrySignature); nothing was retired. `strongroom fields rotate` signs it again under the active key.")
        }
        // The retired id may be given to a new key (FieldKeyring.addingKey):
        // its check value goes with it, or the database would refuse that key.
        if (try? FieldKeyCheck.recorded(in: db)[keyID]) != nil {
            try? db.execute(sql: "DELETE FROM main.\(FieldKeyCheck.table) WHERE key_id = ?", arguments: [DatabaseValue.integer(Int64(keyID))])
        }
        return staying
    }

    /// Per column, the rows (their primary key values, or rowid) whose
    /// envelope does not open under `keyring`: each opened by its own
    /// algorithm byte (randomized bound to the row's primary key, or
    /// deterministic), in every column the search found envelopes in.
    static func envelopesThatDoNotOpen(under keyring: FieldKeyring, findings: [SealedValueSearch.Finding], in db: Connection) throws -> [String: [String]] {
        // Only to open: the keys that stay need not be ones the database recorded.
        let cipher = FieldCipher(keyring: keyring, context: try SealedColumnRegistry.context(in: db))
        var failures: [String: [String]] = [:]
        for finding in findings where !finding.randomizedByKeyID.isEmpty || !finding.deterministicByKeyID.isEmpty {
            let key = try primaryKey(of: finding.table, in: db)
            for row in try StoredValues.rows(of: finding.table, column: finding.column, key: key.isEmpty ? ["rowid"] : key,
                                             where: "typeof(strongroom_value) IN ('blob', 'text')", asBytes: true, in: db) {
                guard case .blob(let bytes) = row.stored,
                      bytes.count > FieldEnvelope.headerByteCount, bytes[0] == FieldEnvelope.version, bytes[1] == 1 || bytes[1] == 2,
                      !(bytes.count == 4 + FieldEnvelope.blindIndexTagByteCount) else { continue }
                let mode: SealingMode = bytes[1] == 1 ? .randomized : .deterministic
                do {
                    _ = try cipher.open(row.stored, table: finding.table, column: finding.column, rowKey: mode == .deterministic ? [] : row.rowKey, mode: mode)
                } catch {
                    failures["\(finding.table).\(finding.column)", default: []].append(row.rowKey.map { "\($0)" }.joined(separator: ", "))
                }
            }
        }
        return failures
    }

    static func primaryKey(of table: String, in db: Connection) throws(StrongroomError) -> [String] {
        try PrimaryKeyColumns.read(table, in: db).map(\.name)
    }
}

extension FieldRotation.Report: CustomStringConvertible {
    /// "Re-sealed 700 values in 18 batches: customer.email 250, …".
    public var description: String {
        let total = resealed.values.reduce(0, +)
        let columns = resealed.keys.sorted().map { "\($0) \(resealed[$0]!)" }.joined(separator: ", ")
        return "Re-sealed \(total) values in \(batches) batches" + (columns.isEmpty ? "." : ": \(columns).")
    }
}

extension FieldRotation.ColumnStatus: CustomStringConvertible {
    /// "customer.email (indexed): key 1: 12, key 2: 47".
    public var description: String {
        let keys = valuesByKeyID.keys.sorted().map { "key \($0): \(valuesByKeyID[$0]!)" }.joined(separator: ", ")
        return "\(table).\(column) (\(mode.rawValue)): \(keys.isEmpty ? "no values" : keys)\(unsealed > 0 ? "; \(unsealed) not sealed" : "")"
    }
}
