public import Strongroom

/// Sealed values found in the data itself, not in the registry: anyone with
/// the database key can edit `strongroom_sealed_columns`, but not make an
/// envelope disappear from the column it is in. Envelopes are recognisable
/// (<doc:SealedValueFormat>): a BLOB of version 1 and a known algorithm;
/// a blind index is a BLOB of 20 bytes (key id and a 16-byte tag); a row
/// signature (``SignedRow``) a BLOB of 38, its second byte 3.
public enum SealedValueSearch {
    /// One column in which values sealed under some key were found.
    public struct Finding: Sendable, Hashable {
        /// The table.
        public let table: String
        /// The column.
        public let column: String
        /// Envelopes per key id: randomized (AES-GCM) ones.
        public let randomizedByKeyID: [UInt32: Int]
        /// Envelopes per key id: deterministic (AES-SIV) ones.
        public let deterministicByKeyID: [UInt32: Int]
        /// Values shaped like blind indexes, per key id.
        public let blindIndexesByKeyID: [UInt32: Int]
        /// Row signatures (``SignedRow``), per key id.
        public let rowSignaturesByKeyID: [UInt32: Int]
        /// Values that are none of these (plaintext, or other data).
        public let otherValues: Int

        /// The mode its envelopes were sealed in, when every value of the
        /// column is an envelope (a column of other data where a few values
        /// look like envelopes by chance is none): randomized when any is (an
        /// indexed column's values are randomized too), else deterministic;
        /// nil otherwise.
        public var mode: SealingMode? {
            guard otherValues == 0 && blindIndexesByKeyID.isEmpty && rowSignaturesByKeyID.isEmpty else { return nil }
            return !randomizedByKeyID.isEmpty ? .randomized : !deterministicByKeyID.isEmpty ? .deterministic : nil
        }

        /// Values of any kind under `keyID`.
        public func count(underKey keyID: UInt32) -> Int {
            (randomizedByKeyID[keyID] ?? 0) + (deterministicByKeyID[keyID] ?? 0) + (blindIndexesByKeyID[keyID] ?? 0) + (rowSignaturesByKeyID[keyID] ?? 0)
        }
    }

    /// The tables of the main database as SQLite loads them: by the name in
    /// each `CREATE TABLE` of `sqlite_master` (SQLite reads a row's SQL, not
    /// its `type` or `name`, which `writable_schema` can make lie), and by
    /// the names of rows of type `table`; the registry and tables named like
    /// SQLite's own included.
    static func tableNames(in db: Connection) throws(StrongroomError) -> [String] {
        var names: [String] = []
        for row in try db.fetchAll(sql: "SELECT type, name, sql FROM main.sqlite_master") {
            var candidates: [String] = []
            if case .text(let type) = row[0], type == "table", case .text(let name) = row[1] { candidates.append(name) }
            if let created = createdTableName(SQLScript.schemaText(row[2])) { candidates.append(created) }
            for name in candidates where !names.contains(where: { $0.sqliteFolded == name.sqliteFolded }) {
                // Only a name SQLite knows as a table (a view or a lie has no columns here).
                if try !db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(name)))").isEmpty { names.append(name) }
            }
        }
        return names.sorted()
    }

    /// The table a `CREATE [TEMP] TABLE [IF NOT EXISTS] [schema.]name` makes;
    /// nil for any other statement (a virtual table keeps its data in
    /// ordinary tables of its own).
    static func createdTableName(_ sql: String) -> String? {
        var tokens: [String] = []
        var words: [String] = []
        var scalars = SQLScript.normalized(sql).unicodeScalars[...]
        while let first = scalars.first, tokens.count < 8 {
            if first == " " { scalars.removeFirst(); continue }
            let closing: Unicode.Scalar? = first == "\"" ? "\"" : first == "`" ? "`" : first == "[" ? "]" : first == "'" ? "'" : nil
            if let closing {
                scalars.removeFirst()
                var name = ""
                while let c = scalars.first {
                    scalars.removeFirst()
                    if c == closing {
                        // A doubled quote is one quote (not inside brackets).
                        if closing != "]", scalars.first == closing { scalars.removeFirst(); name.unicodeScalars.append(c); continue }
                        break
                    }
                    name.unicodeScalars.append(c)
                }
                tokens.append(name); words.append("")
            } else if first.properties.isAlphabetic || first == "_" || first == "$" || ("0"..."9").contains(first) || first.value >= 0x80 {
                var word = ""
                while let c = scalars.first, c.properties.isAlphabetic || c == "_" || c == "$" || ("0"..."9").contains(c) || c.value >= 0x80 {
                    word.unicodeScalars.append(c); scalars.removeFirst()
                }
                tokens.append(word); words.append(word.asciiUppercased)
            } else {
                tokens.append(String(first)); words.append(String(first)); scalars.removeFirst()
            }
        }
        var i = 0
        func next(_ word: String) -> Bool { if i < words.count && words[i] == word { i += 1; return true }; return false }
        guard next("CREATE") else { return nil }
        _ = next("TEMP") || next("TEMPORARY")
        guard next("TABLE") else { return nil }
        if next("IF") { guard next("NOT"), next("EXISTS") else { return nil } }
        guard i < tokens.count else { return nil }
        var name = tokens[i]
        if i + 2 < tokens.count && tokens[i + 1] == "." { name = tokens[i + 2] }
        return name
    }

    /// Every column of every table (the registry and tables named like
    /// SQLite's own included) holding envelopes or blind indexes, with their
    /// counts per key id. An envelope stored as TEXT counts too: its bytes
    /// are the envelope's.
    ///
    /// Each table is read once for all its columns, with a test that every
    /// envelope, blind index and row signature passes (a BLOB of 20 bytes,
    /// or a BLOB or TEXT whose first byte is 1); only the columns where a
    /// value passed are read again, and counted. A plaintext Chinook is read
    /// in one pass per table instead of one sorted pass per column.
    /// (``sealedColumns(in:keyring:)`` reads less: it rules a column out at
    /// its first value that cannot be an envelope, and stops reading a table
    /// once every column is.)
    ///
    /// Both reads are of the table itself (`NOT INDEXED`): an index whose
    /// `sqlite_master` row was rewritten to name other columns or another
    /// expression than it holds would answer with stale values (a covering
    /// index, or one on the very expression an aggregate reads).
    public static func findings(in db: Connection) throws(StrongroomError) -> [Finding] {
        try findings(in: db, among: .anyEnvelope)
    }

    /// Which columns of a table ``findings(in:among:)`` counts in.
    enum Candidates {
        /// Every column where one value may be an envelope, a blind index
        /// or a row signature: what ``findings(in:)`` reports.
        case anyEnvelope
        /// Only the columns all of whose values may be envelopes (and one
        /// at least is there): the findings whose ``Finding/mode`` is not
        /// nil, and perhaps others, which the mode then leaves out.
        case onlyEnvelopes
    }

    /// ``findings(in:)``, in the columns `candidates` picks of each table.
    static func findings(in db: Connection, among candidates: Candidates) throws(StrongroomError) -> [Finding] {
        var findings: [Finding] = []
        for table in try tableNames(in: db) {
            let quotedTable = "main." + SQLScript.quotedIdentifier(table)
            let columns = try searchedColumns(of: table, in: db)
            let picked = switch candidates {
            case .anyEnvelope: try columnsThatMayHoldSealedValues(columns, of: quotedTable, in: db)
            case .onlyEnvelopes: try columnsThatMayHoldOnlyEnvelopes(columns, of: quotedTable, in: db)
            }
            for column in picked {
                let name = SQLScript.quotedIdentifier(column)
                let bytes = "CAST(\(name) AS BLOB)"
                let blindIndex = "typeof(\(name)) = 'blob' AND length(\(name)) = \(4 + FieldEnvelope.blindIndexTagByteCount)"
                // The shortest envelopes: header, nonce or synthetic IV, tag, one plaintext byte.
                let envelope = """
                    typeof(\(name)) IN ('blob', 'text') AND substr(\(bytes), 1, 1) = x'01'
                    AND ((substr(\(bytes), 2, 1) = x'01' AND length(\(bytes)) >= \(FieldEnvelope.headerByteCount + 12 + 16 + 1))
                      OR (substr(\(bytes), 2, 1) = x'02' AND length(\(bytes)) >= \(FieldEnvelope.headerByteCount + 16 + 1)))
                    """
                let signature = RowSignature.shapeSQL(name)
                // kind: 1 GCM envelope, 2 SIV envelope, 3 row signature, 0 blind index, NULL anything else.
                var found: [UInt8: [UInt32: Int]] = [:]
                var others = 0
                for row in try db.fetchAll(sql: """
                    SELECT CASE WHEN \(blindIndex) THEN x'00' WHEN \(signature) THEN x'03' WHEN \(envelope) THEN substr(\(bytes), 2, 1) END AS kind,
                           CASE WHEN \(blindIndex) THEN substr(\(name), 1, 4) WHEN \(signature) OR \(envelope) THEN substr(\(bytes), 3, 4) END AS key_id,
                           count(*) AS n
                      FROM \(quotedTable) NOT INDEXED WHERE \(name) IS NOT NULL GROUP BY 1, 2
                    """) {
                    let count = try row.decode(Int.self, column: "n")
                    guard let kind = try row.decode([UInt8]?.self, column: "kind")?.first,
                          let id = try row.decode([UInt8]?.self, column: "key_id")?.reduce(UInt32(0), { $0 << 8 | UInt32($1) }) else {
                        others += count
                        continue
                    }
                    found[kind, default: [:]][id, default: 0] += count
                }
                guard !found.isEmpty else { continue }
                findings.append(Finding(table: table, column: column, randomizedByKeyID: found[1] ?? [:], deterministicByKeyID: found[2] ?? [:],
                                        blindIndexesByKeyID: found[0] ?? [:], rowSignaturesByKeyID: found[3] ?? [:], otherValues: others))
            }
        }
        return findings
    }

    /// The columns of `table` whose values a read returns: `PRAGMA
    /// table_xinfo` where SQLite has it (3.26 on), so that a column whose
    /// `CREATE TABLE` the adversary rewrote as generated (`AS (…) STORED`),
    /// which `table_info` leaves out, is searched too; the hidden columns of
    /// a virtual table are not. Older SQLite ignores the pragma (no rows),
    /// and `table_info` lists every column it can have.
    static func searchedColumns(of table: String, in db: Connection) throws(StrongroomError) -> [String] {
        let quoted = SQLScript.quotedIdentifier(table)
        let extended = try db.fetchAll(sql: "PRAGMA main.table_xinfo(\(quoted))")
        if !extended.isEmpty {
            var names: [String] = []
            for row in extended where try row.decode(Int.self, column: "hidden") != 1 {
                names.append(try row.decode(String.self, column: "name"))
            }
            return names
        }
        return try db.fetchAll(sql: "PRAGMA main.table_info(\(quoted))").map { row throws(StrongroomError) in try row.decode(String.self, column: "name") }
    }

    /// The columns of `columns` where at least one value is shaped as an
    /// envelope, a blind index or a row signature may be (a superset of
    /// what ``findings(in:)`` counts), in one read of the table: a BLOB of
    /// 20 bytes, or a BLOB or TEXT whose first stored byte is 1.
    ///
    /// The values are tested in Swift as SQLite holds them, not by an SQL
    /// aggregate per column (issue 51), each column until one value passes,
    /// and the read stops when every column has passed.
    static func columnsThatMayHoldSealedValues(_ columns: [String], of quotedTable: String, in db: Connection) throws(StrongroomError) -> [String] {
        var passed = [Bool](repeating: false, count: columns.count)
        try scan(columns, of: quotedTable, in: db) { value in
            // A value that passes decides its column.
            (value.storageClass == .blob && value.byteCount == 4 + FieldEnvelope.blindIndexTagByteCount) || value.firstByte == 1
        } decided: { index in passed[index] = true }
        return columns.indices.compactMap { passed[$0] ? columns[$0] : nil }
    }

    /// The columns of `columns` whose every value may be an envelope (a
    /// BLOB or TEXT whose first stored byte is 1) and one value at least is
    /// not NULL: a superset of the findings whose ``Finding/mode`` is not
    /// nil, which have no value of another shape. A column is ruled out at
    /// its first value of another shape, and the read stops once every
    /// column is: on a plaintext table, at the first row where no column
    /// is NULL (a column NULL in every row, or one that may be sealed,
    /// keeps it reading to the end). Chinook's tables stop within a few
    /// rows (issue 51).
    static func columnsThatMayHoldOnlyEnvelopes(_ columns: [String], of quotedTable: String, in db: Connection) throws(StrongroomError) -> [String] {
        var ruledOut = [Bool](repeating: false, count: columns.count)
        var shaped = [Bool](repeating: false, count: columns.count)
        try scan(columns, of: quotedTable, in: db) { value in
            // NULL, or what may be an envelope, leaves the column open; any
            // other shape rules it out, for good.
            !(value.storageClass == .null || value.firstByte == 1)
        } decided: { index in
            ruledOut[index] = true
        } undecided: { index in
            shaped[index] = true
        }
        return columns.indices.compactMap { !ruledOut[$0] && shaped[$0] ? columns[$0] : nil }
    }

    /// Reads `columns` of the table itself (`NOT INDEXED`: an index whose
    /// `sqlite_master` row was rewritten to name other columns than it
    /// holds would answer with stale values), row by row, as stored.
    /// A value for which `decides` is true decides its column (`decided`),
    /// whose values are not tested again; any other goes on testing it
    /// (after `undecided`, for a value that is not NULL). The read stops
    /// once every column is decided.
    private static func scan(_ columns: [String], of quotedTable: String, in db: Connection,
                             decides: (RowView.StoredShape) -> Bool, decided: (Int) -> Void,
                             undecided: (Int) -> Void = { _ in }) throws(StrongroomError) {
        guard !columns.isEmpty else { return }
        let statement = try db.prepare(sql: "SELECT \(columns.map(SQLScript.quotedIdentifier).joined(separator: ", ")) FROM \(quotedTable) NOT INDEXED")
        var open = Array(columns.indices)
        try statement.forEachStoredRow { row in
            open.removeAll { index in
                let value = row.storedShape(at: index)
                guard decides(value) else {
                    if value.storageClass != .null { undecided(index) }
                    return false
                }
                decided(index)
                return true
            }
            return !open.isEmpty
        }
    }

    /// The columns the registry records, and after them every column whose
    /// values are all envelopes though the registry does not say so (its
    /// mode read from them), so that status and rotation miss none. (A
    /// column the registry forgot that also holds other values is not taken:
    /// ``FieldRotation/retire(_:from:in:)`` still finds its envelopes.)
    ///
    /// With a `keyring`, the registry must verify under it first
    /// (``RegistrySignature``): what a tool that re-seals acts on. The
    /// columns found by their envelopes alone take the mode the envelopes
    /// show (which no one can forge without the keyring) and no index.
    public static func sealedColumns(in db: Connection, keyring: FieldKeyring? = nil) throws(StrongroomError) -> [SealedColumn] {
        if let keyring { try RegistrySignature.verify(keyring, in: db) }
        let recorded = try SealedColumnRegistry.columns(in: db)
        var columns = recorded
        // Only envelopes: a column with a value of another shape has no mode.
        for finding in try findings(in: db, among: .onlyEnvelopes) {
            guard let mode = finding.mode else { continue }
            let column = SealedColumn(table: finding.table, column: finding.column, mode: mode)
            if !recorded.contains(where: { $0.names(sameColumnAs: column) }) { columns.append(column) }
        }
        return columns
    }
}
