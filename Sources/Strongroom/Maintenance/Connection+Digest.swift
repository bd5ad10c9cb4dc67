import StrongroomCrypto

/// The row count and content hash of one table.
public struct TableDigest: Sendable, Hashable, Codable {
    /// The table name.
    public let name: String
    /// The number of rows.
    public let rowCount: Int
    /// SHA-256 (hex) over the table's rows, independent of row order: each row
    /// is hashed with its values' types, the row hashes are sorted and hashed again.
    public let sha256: String
}

extension Connection {
    /// The user tables of `schema` (`main` or an attached name), by name.
    func tableNames(schema: String = "main") throws(StrongroomError) -> [String] {
        try fetchAll(String.self, sql: "SELECT name FROM \(SQLScript.quotedIdentifier(schema)).sqlite_master WHERE type = 'table' AND \(SQLScript.isUserObjectName()) ORDER BY name")
    }

    /// Row counts and content hashes of every user table, to prove that a copy
    /// holds exactly the same rows.
    public func tableDigests() throws(StrongroomError) -> [TableDigest] {
        try tableNames().map { name throws(StrongroomError) in try digest(ofTable: name) }
    }

    func digest(ofTable name: String) throws(StrongroomError) -> TableDigest {
        let statement = try prepare(sql: "SELECT * FROM \(SQLScript.quotedIdentifier(name))")
        var rowHashes: [[UInt8]] = []
        try statement.withRows { statement in
            var hash = SHA256()
            for i in 0..<Int32(statement.columnCount) {
                switch statement.databaseValue(at: i) {
                case .null: hash.update([0])
                case .integer(let n): hash.update([1] + withUnsafeBytes(of: n.bigEndian, Array.init))
                case .real(let d): hash.update([2] + withUnsafeBytes(of: d.bitPattern.bigEndian, Array.init))
                case .text(let s):
                    let bytes = Array(s.utf8)
                    hash.update([3] + withUnsafeBytes(of: UInt64(bytes.count).bigEndian, Array.init) + bytes)
                case .blob(let b):
                    hash.update([4] + withUnsafeBytes(of: UInt64(b.count).bigEndian, Array.init) + b)
                }
            }
            rowHashes.append(hash.finalize())
        }
        rowHashes.sort { $0.lexicographicallyPrecedes($1) }
        var total = SHA256()
        for rowHash in rowHashes { total.update(rowHash) }
        return TableDigest(name: name, rowCount: rowHashes.count, sha256: Hex.encode(total.finalize()))
    }
}

extension Statement {
    /// Steps through every row, calling `body` with the statement positioned on it.
    func withRows(_ body: (Statement) throws(StrongroomError) -> Void) throws(StrongroomError) {
        reset()
        defer { reset() }
        while try step() {
            try body(self)
        }
    }
}
