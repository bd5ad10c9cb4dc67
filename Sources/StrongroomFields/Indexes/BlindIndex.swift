public import Strongroom

/// A blind index: a keyed hash of one or more columns' values, stored in a
/// companion BLOB column with an SQL index on it, so that rows can be found
/// by a sealed value without the database learning the value.
///
/// Each index has a name (the companion column's, unique in its table),
/// its columns, each with the ``BlindIndexTransformation``s applied before
/// hashing, and a length in bits, from 1 to 128:
///
/// - At 128 bits, equal values have equal index values and different values
///   practically never do: a database-key holder learns which rows share a
///   value (the equality classes). Only such an index can be `unique`.
/// - Truncated to fewer bits, many values share each index value: a lookup
///   reads a few candidates and drops the false positives
///   (``Strongroom/Connection/fetchAll(_:where:)``), and the
///   index no longer tells which rows hold equal values. `strongroom fields
///   plan` measures, on the data, which lengths keep every index value
///   shared by at least k rows.
///
/// ```swift
/// let indexes = [
///     BlindIndex("email_index", on: "email", in: "customer", unique: true),
///     BlindIndex("email_folded", on: "email", in: "customer", bits: 16, transformations: [.trimmed, .normalizedCaseFolded]),
///     BlindIndex("name_born", in: "customer", bits: 12, parts: [
///         .init("last_name", [.normalizedCaseFolded]), .init("birth_date", [.year]),
///     ]),
/// ]
/// config.seal(columns, indexes: indexes, keyring: keyring)
/// ```
///
/// Its key is derived from the field key with the table, name, columns,
/// transformations and length: changing any of them changes every index
/// value (rebuild it: ``BlindIndexRebuild``). The format page gives the
/// derivation (<doc:SealedValueFormat>).
public struct BlindIndex: Sendable, Hashable, Codable {
    /// One column an index covers, with what is done to its value first.
    public struct Part: Sendable, Hashable, Codable {
        /// The column.
        public let column: String
        /// Applied in order before hashing; none hashes the exact value.
        public let transformations: [BlindIndexTransformation]

        /// A column of an index, and its transformations.
        public init(_ column: String, _ transformations: [BlindIndexTransformation] = []) {
            self.column = column
            self.transformations = transformations
        }

        /// The transformations' names joined by commas: what the key binds.
        public var transformationNames: String { transformations.map(\.name).joined(separator: ",") }
    }

    /// The index's name: the companion column that holds its values (the
    /// SQL index on it is `table_name`).
    public let name: String
    /// The table.
    public let table: String
    /// The columns, in order.
    public let parts: [Part]
    /// The index value's length, from 1 to 128 bits.
    public let bits: Int
    /// Whether no two rows may hold the same index value (a UNIQUE SQL
    /// index): only for a 128-bit index.
    public let unique: Bool
    /// True for the index of a ``SealingMode/indexed`` column, kept from the
    /// first format (exact value, 128 bits, the column's own key).
    private(set) var isColumnIndex = false

    /// Whether this is an ``SealingMode/indexed`` column's own index (``columnIndex(of:)``).
    public var isIndexedColumnsOwn: Bool { isColumnIndex }

    private enum CodingKeys: String, CodingKey { case name, table, parts, bits, unique }

    /// An index over one column.
    public init(_ name: String, on column: String, in table: String, bits: Int = 128, transformations: [BlindIndexTransformation] = [], unique: Bool = false) {
        self.init(name, in: table, bits: bits, parts: [Part(column, transformations)], unique: unique)
    }

    /// An index over several columns (a compound index): a row matches when
    /// every part does.
    public init(_ name: String, in table: String, bits: Int = 128, parts: [Part], unique: Bool = false) {
        self.name = name
        self.table = table
        self.parts = parts
        self.bits = bits
        self.unique = unique
    }

    private init(columnIndexOf column: SealedColumn, indexColumn: String) {
        name = indexColumn
        table = column.table
        parts = [Part(column.column)]
        bits = Self.maximumBits
        unique = false
        isColumnIndex = true
    }

    /// The index an ``SealingMode/indexed`` column has always had: its
    /// `indexColumn`, over the exact value, 128 bits. Its values are those
    /// of the first format, so data indexed before keeps working as it is.
    public static func columnIndex(of column: SealedColumn) -> BlindIndex? {
        guard column.mode == .indexed, let indexColumn = column.indexColumn else { return nil }
        return BlindIndex(columnIndexOf: column, indexColumn: indexColumn)
    }

    /// The longest index: 128 bits.
    public static let maximumBits = 128

    /// The bytes of an index value after the key id: the bits, rounded up.
    var tagByteCount: Int { (bits + 7) / 8 }

    /// Checks the definition, as a configuration, `fields index add` and
    /// `@Table` do before using it.
    ///
    /// - Throws: ``FieldError/Code/misuse`` naming what is wrong: no parts,
    ///   a length out of 1…128, a truncated `unique` index (two values may
    ///   share a truncated index value, so UNIQUE would refuse a new value
    ///   for another's sake), a column given twice, an empty name.
    public func validate() throws(FieldError) {
        guard !name.isEmpty else {
            throw FieldError(.misuse, "A blind index of \(table) has an empty name; name it (its values go in a column of that name).", table: table)
        }
        guard !parts.isEmpty else {
            throw FieldError(.misuse, "Blind index \(name) of \(table) covers no column; give it one column or more.", table: table)
        }
        guard (1...Self.maximumBits).contains(bits) else {
            throw FieldError(.misuse, "Blind index \(name) of \(table) is \(bits) bits long; a blind index has 1 to \(Self.maximumBits) bits.", table: table)
        }
        if unique && bits < Self.maximumBits {
            throw FieldError(.misuse, "Blind index \(name) of \(table) is truncated to \(bits) bits and declared unique: different values may share a truncated index value, so UNIQUE would refuse a value for another's sake. Make it \(Self.maximumBits) bits, or not unique.", table: table)
        }
        for (position, part) in parts.enumerated() {
            if parts[..<position].contains(where: { $0.column.sqliteFolded == part.column.sqliteFolded }) {
                throw FieldError(.misuse, "Blind index \(name) of \(table) names \(part.column) twice; give each column once, with all its transformations.", table: table, column: part.column)
            }
            if part.column.sqliteFolded == name.sqliteFolded {
                throw FieldError(.misuse, "Blind index \(name) of \(table) covers its own column; name the index apart from the columns it covers.", table: table, column: part.column)
            }
        }
    }

    /// Checks `indexes` as the blind indexes of sealed `columns`: each
    /// valid, covering at least one of `columns` (an index of plain columns
    /// only hides nothing: use an SQL index), named apart from every column
    /// it could be mistaken for, and each name once per table.
    public static func validate(_ indexes: [BlindIndex], of columns: [SealedColumn]) throws(FieldError) {
        let all = columns.compactMap(\.columnIndex) + indexes
        for (position, index) in all.enumerated() {
            try index.validate()
            let sealed = columns.filter { $0.table.sqliteFolded == index.table.sqliteFolded }
            guard index.parts.contains(where: { part in sealed.contains { $0.column.sqliteFolded == part.column.sqliteFolded } }) else {
                throw FieldError(.misuse, "Blind index \(index.name) of \(index.table) covers no sealed column of \(index.table); a blind index hides sealed values: index a plain column with CREATE INDEX.", table: index.table)
            }
            if let column = sealed.first(where: { $0.column.sqliteFolded == index.name.sqliteFolded }) {
                throw FieldError(.misuse, "Blind index \(index.name) of \(index.table) has the name of sealed column \(column.column); its values need a column of their own.", table: index.table, column: column.column)
            }
            if all[..<position].contains(where: { $0.table.sqliteFolded == index.table.sqliteFolded && $0.name.sqliteFolded == index.name.sqliteFolded }) {
                throw FieldError(.misuse, "\(index.table) has two blind indexes named \(index.name) (an indexed column's own index is named by its indexColumn); give each its own name.", table: index.table)
            }
        }
    }

    /// An index's column holds BLOBs: one the table declares with another
    /// type (`phone TEXT`) is some other data, which inserts would replace
    /// with index values.
    static func refuseColumnsOfAnotherType(_ indexes: [BlindIndex], in db: Connection) throws(StrongroomError) {
        for index in indexes {
            for row in try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(index.table)))") {
                guard try row.decode(String.self, column: "name").sqliteFolded == index.name.sqliteFolded else { continue }
                let type = try row.decode(String.self, column: "type")
                if !["", "BLOB"].contains(type.asciiUppercased) {
                    throw StrongroomError(.misuse, "Blind index \(index.name) of \(index.table) would store its values in column \(index.name), which is declared \(type): it holds other data. Name the index apart from the table's columns (its column is a BLOB of its own).", path: db.path)
                }
            }
        }
    }

    /// The values to hash: each part's value (`values`, in part order)
    /// transformed, or nil when one is NULL (a row with a NULL part has no
    /// index value, and no lookup finds it).
    ///
    /// - Throws: ``FieldError/Code/untransformable`` naming the column and
    ///   `row`, for a value a transformation does not take.
    public func transformed(_ values: [DatabaseValue], row: @autoclosure () -> String? = nil) throws(FieldError) -> [DatabaseValue]? {
        precondition(values.count == parts.count, "one value per part of the index")
        // A NULL part: no index value, whatever the other parts hold (nothing is transformed).
        if values.contains(where: \.isNull) { return nil }
        var out: [DatabaseValue] = []
        out.reserveCapacity(values.count)
        for (part, value) in zip(parts, values) {
            var current = value
            for transformation in part.transformations {
                switch transformation.apply(current) {
                case .success(let next): current = next
                case .failure(let refusal):
                    let row = row()
                    let place = row.map { "\(table).\(part.column), row \($0)" } ?? "\(table).\(part.column)"
                    throw FieldError(.untransformable, "\(place): blind index \(name) cannot index the value: \(refusal.message(transformation)). Correct the value, or the index's transformations.", table: table, column: part.column, row: row)
                }
            }
            out.append(current)
        }
        return out
    }

    /// Whether two of the index's inputs match: the rows a lookup keeps
    /// are those whose transformed values equal the probe's.
    static func matches(_ a: [DatabaseValue], _ b: [DatabaseValue]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
    }

    /// Equal as the index hashes them: TEXT by its UTF-8 bytes (Swift's
    /// `==` would take canonically equivalent strings, NFC and NFD, as one),
    /// and a value's type counts.
    static func same(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        switch (a, b) {
        case (.text(let x), .text(let y)):
            // By their UTF-8 bytes, as the index hashed them (one memcmp):
            // canonically equivalent texts are two values here.
            ExactText(x) == ExactText(y)
        case (.real(let x), .real(let y)): x.bitPattern == y.bitPattern
        default: a == b
        }
    }
}

extension BlindIndex: CustomStringConvertible {
    /// `customer.email_folded (email: trim,nfkc-casefold; 16 bits)`.
    public var description: String {
        let parts = parts.map { $0.transformations.isEmpty ? $0.column : "\($0.column): \($0.transformationNames)" }.joined(separator: ", ")
        return "\(table).\(name) (\(parts); \(bits) bits\(unique ? ", unique" : ""))"
    }
}

extension SealedColumn {
    /// This column's index if it is ``SealingMode/indexed`` (see ``BlindIndex/columnIndex(of:)``).
    public var columnIndex: BlindIndex? { BlindIndex.columnIndex(of: self) }
}
