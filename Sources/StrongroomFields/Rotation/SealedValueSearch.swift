public import Strongroom

/// Sealed values found in the data itself, not in the registry: anyone with
/// the database key can edit `strongroom_sealed_columns`, but not make an
/// envelope disappear from the column it is in. Envelopes are recognisable
/// (<doc:SealedValueFormat>): a BLOB of version 1 and a known algorithm;
/// a blind index is a BLOB of 20 bytes (key id and a 16-byte tag).
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

        /// The mode its envelopes were sealed in: randomized when any is
        /// (an indexed column's values are randomized too), else deterministic;
        /// nil when it holds only blind indexes.
        public var mode: SealingMode? {
            !randomizedByKeyID.isEmpty ? .randomized : !deterministicByKeyID.isEmpty ? .deterministic : nil
        }

        /// Values of any kind under `keyID`.
        public func count(underKey keyID: UInt32) -> Int {
            (randomizedByKeyID[keyID] ?? 0) + (deterministicByKeyID[keyID] ?? 0) + (blindIndexesByKeyID[keyID] ?? 0)
        }
    }

    /// Every column of every table (but the registry) holding envelopes or
    /// blind indexes, with their counts per key id. Reads each column once.
    public static func findings(in db: Connection) throws(StrongroomError) -> [Finding] {
        var findings: [Finding] = []
        for table in try db.tableNames() where table.sqliteFolded != SealedColumnRegistry.table.sqliteFolded {
            let quotedTable = SQLScript.quotedIdentifier(table)
            for column in try db.fetchAll(sql: "PRAGMA table_info(\(quotedTable))").map({ row throws(StrongroomError) in try row.decode(String.self, column: "name") }) {
                let name = SQLScript.quotedIdentifier(column)
                // kind: 1 GCM envelope, 2 SIV envelope, 0 blind index.
                var found: [UInt8: [UInt32: Int]] = [:]
                for row in try db.fetchAll(sql: """
                    SELECT CASE WHEN length(\(name)) = \(4 + FieldEnvelope.blindIndexTagByteCount) THEN x'00' ELSE substr(\(name), 2, 1) END AS kind,
                           CASE WHEN length(\(name)) = \(4 + FieldEnvelope.blindIndexTagByteCount) THEN substr(\(name), 1, 4) ELSE substr(\(name), 3, 4) END AS key_id,
                           count(*) AS n
                      FROM \(quotedTable)
                     WHERE typeof(\(name)) = 'blob'
                       AND (length(\(name)) = \(4 + FieldEnvelope.blindIndexTagByteCount)
                            OR (length(\(name)) > \(FieldEnvelope.headerByteCount) AND substr(\(name), 1, 1) = x'01' AND substr(\(name), 2, 1) IN (x'01', x'02')))
                     GROUP BY 1, 2
                    """) {
                    let kind = try row.decode([UInt8].self, column: "kind").first ?? 0
                    let id = try row.decode([UInt8].self, column: "key_id").reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    found[kind, default: [:]][id, default: 0] += try row.decode(Int.self, column: "n")
                }
                guard !found.isEmpty else { continue }
                findings.append(Finding(table: table, column: column, randomizedByKeyID: found[1] ?? [:],
                                        deterministicByKeyID: found[2] ?? [:], blindIndexesByKeyID: found[0] ?? [:]))
            }
        }
        return findings
    }

    /// The columns the registry records, and after them every column whose
    /// envelopes show it sealed though the registry does not say so (its
    /// mode read from them), so that status and rotation miss none.
    public static func sealedColumns(in db: Connection) throws(StrongroomError) -> [SealedColumn] {
        let recorded = try SealedColumnRegistry.columns(in: db)
        var columns = recorded
        for finding in try findings(in: db) {
            guard let mode = finding.mode else { continue }
            let column = SealedColumn(table: finding.table, column: finding.column, mode: mode)
            if !recorded.contains(where: { $0.names(sameColumnAs: column) }) { columns.append(column) }
        }
        return columns
    }
}
