/// The column names of a statement's rows, shared by all of them.
package final class RowLayout: Sendable {
    package let columnNames: [String]
    /// Names by their UTF-8 bytes, then folded as SQLite folds them (ASCII
    /// letters only): never by Swift's `==`, which takes `apiKey` and
    /// `api\u{212A}ey` (KELVIN SIGN), or an NFC and an NFD spelling, for one
    /// name. To SQLite those are two columns, and one of them may be a plain
    /// column planted beside a sealed one by whoever holds the database key.
    let indexByName: [ExactText: Int]
    let indexByFoldedName: [FoldedName: Int]
    /// The names more than one column answers to, as SQLite matches names.
    let sharedNames: Set<FoldedName>
    /// The declared sealed properties opened in these rows (see
    /// ``Connection/fetchAll(sql:arguments:opening:)``); empty for rows as stored.
    let opened: [SealedProperty]
    /// The declaration these rows were read under (the `opening:` list):
    /// what they opened, and whose signed tables' rows they checked. Empty
    /// for rows as stored.
    let declared: [SealedProperty]

    init(columnNames: [String], opened: [SealedProperty] = [], declared: [SealedProperty] = []) {
        self.columnNames = columnNames
        self.opened = opened
        self.declared = declared
        var exact: [ExactText: Int] = [:]
        var folded: [FoldedName: Int] = [:]
        var shared: Set<FoldedName> = []
        for (i, name) in columnNames.enumerated() {
            if exact[ExactText(name)] == nil { exact[ExactText(name)] = i }
            let key = name.sqliteFolded
            if folded[key] == nil { folded[key] = i } else { shared.insert(key) }
        }
        indexByName = exact
        indexByFoldedName = folded
        sharedNames = shared
    }

    /// True when more than one column answers to `name` as SQLite matches
    /// names (a join's `SELECT *`): SQLite would call it ambiguous.
    func isAmbiguous(_ name: String) -> Bool {
        !sharedNames.isEmpty && sharedNames.contains(name.sqliteFolded)
    }

    /// The index of the leftmost column named `name`, matched byte for byte
    /// first, then with ASCII letters' case folded (as SQLite matches
    /// column names: "é" is not "É", nor "e" and a combining accent).
    package func index(of name: String) -> Int? {
        indexByName[ExactText(name)] ?? indexByFoldedName[name.sqliteFolded]
    }
}

/// A row read from the database: values by index or by column name.
///
/// ```swift
/// for row in try db.fetchAll(sql: "SELECT id, name FROM person") {
///     let id: Int = try row.decode(at: 0)
///     let name: String? = try row.decode(column: "name")
///     print(row["name"] ?? .null)
/// }
/// ```
public struct Row: Sendable {
    let layout: RowLayout
    /// The values, in column order.
    public let values: [DatabaseValue]
    /// The conversion policy of the connection that read the row.
    let conversion: ValueConversion

    init(layout: RowLayout, values: [DatabaseValue], conversion: ValueConversion = .strict) {
        self.layout = layout
        self.values = values
        self.conversion = conversion
    }

    /// The column names, in order.
    public var columnNames: [String] { layout.columnNames }

    /// The number of columns.
    public var count: Int { values.count }

    /// The value at `index` (0-based).
    public subscript(index: Int) -> DatabaseValue { values[index] }

    /// The value of the column named `name`, or nil when there is no such
    /// column. Names match as SQLite matches them: byte for byte, but for
    /// the case of ASCII letters (`EMAIL` finds `email`; `É` does not find
    /// `é`, nor does an NFD spelling find an NFC one).
    public subscript(name: String) -> DatabaseValue? {
        layout.index(of: name).map { values[$0] }
    }

    /// The value at `index` converted to `T`, under the ``ValueConversion``
    /// policy of the connection that read the row.
    ///
    /// - Throws: ``StrongroomError/Code/conversion`` when the value does not
    ///   convert (NULL converts only to an `Optional`).
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws(StrongroomError) -> T {
        guard index >= 0 && index < values.count else {
            throw StrongroomError(.misuse, "Row has \(values.count) column(s); there is no column \(index).")
        }
        return try values[index].convert(to: T.self, conversion, column: columnNames[index])
    }

    /// The value of the column named `name` (matched as by the
    /// subscript by name) converted to `T`.
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, column name: String) throws(StrongroomError) -> T {
        guard let index = layout.index(of: name) else {
            throw StrongroomError(.misuse, "Row has no column named \(name); it has \(columnNames.joined(separator: ", ")).")
        }
        return try decode(type, at: index)
    }
}

extension DatabaseValue {
    /// SQLite's name of the storage class, for error messages (never the value).
    var typeName: String {
        switch self {
        case .null: return "NULL"
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        }
    }

    /// The Swift type that reads this value as it is stored.
    var naturalSwiftType: String {
        switch self {
        case .null: return "an optional"
        case .integer: return "Int"
        case .real: return "Double"
        case .text: return "String"
        case .blob: return "Data or [UInt8]"
        }
    }

    /// How to read a value of this storage class as `type` instead: a CAST
    /// in the query, or the Swift type that reads it as stored. Never
    /// quotes the value.
    /// True for a BLOB shaped like a Strongroom envelope (format version 1,
    /// a known algorithm, longer than a blind index): a sealed value read
    /// where nothing declared it.
    var looksSealed: Bool {
        guard case .blob(let bytes) = self, bytes.count > 22 else { return false }
        return bytes[0] == 0x01 && (bytes[1] == 0x01 || bytes[1] == 0x02)
    }

    func conversionAdvice(column: String, to type: Any.Type, policy: ValueConversion) -> String {
        if isNull {
            return "Column \(column) is NULL; read it as an optional (\(type)?) to accept NULL."
        }
        let sqlType: String?
        switch "\(type)" {
        case "Int", "Int64", "Int32", "Int16", "Int8", "UInt", "UInt64", "UInt32", "UInt16", "UInt8", "Bool": sqlType = "INTEGER"
        case "Double", "Float": sqlType = "REAL"
        case "String": sqlType = "TEXT"
        default: sqlType = nil
        }
        if looksSealed {
            return "Column \(column) holds a sealed value (a Strongroom envelope), which does not convert to \(type): a read opens a sealed value only into a property the application declares sealed (SealedRecord's sealedProperties, a TableRecord's databaseSealedColumns), or with opening: SealedProperty(\"\(column)\", of: \"<its table>\"), and hands out the envelope's bytes everywhere else. Declare it, or read it as Data. Nothing was opened."
        }
        let cast = sqlType.map { "convert it in the query (CAST(\(column) AS \($0))), or " } ?? ""
        var advice = "Column \(column) holds \(typeName), which does not convert to \(type) (Strongroom does not convert between storage classes silently): \(cast)read it as \(naturalSwiftType) and convert in Swift."
        if case .blob = self, type == String.self || type == String?.self {
            advice += " (TEXT that is not valid UTF-8 also reads as a BLOB of its bytes: nothing is repaired.)"
        }
        if case .real = self, type == Float.self || type == Float?.self {
            advice += " (A REAL out of Float's range does not convert; read it as Double.)"
        }
        if policy == .strict, let convertible = type as? any DatabaseValueConvertible.Type, convertsLosslessly(to: convertible) {
            advice += " Opened with Configuration.valueConversion = .lossless, this value would convert."
        }
        return advice
    }
}

extension Row: CustomStringConvertible {
    /// `[id: 1, name: "Ada", note: NULL, photo: <3 bytes>]`: text quoted, so
    /// that the text "NULL" prints apart from NULL.
    public var description: String {
        let columns = zip(columnNames, values).map { name, value in
            if case .text(let text) = value { return "\(name): \"\(text)\"" }
            return "\(name): \(value)"
        }
        return "[" + columns.joined(separator: ", ") + "]"
    }
}
