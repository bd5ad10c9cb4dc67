import Strongroom

/// Seals and opens the declared columns for one connection: Strongroom's
/// ``ColumnTransform`` extension point, with that connection's
/// ``FieldCipher``.
final class SealingTransform: ColumnTransform {
    let cipher: FieldCipher
    /// Sealed columns by folded table name, then folded column name.
    private let columns: [FoldedName: [FoldedName: SealedColumn]]
    /// The sealed columns as the application declared them.
    let declaredColumns: [SealedColumn]
    /// The tables that hold sealed columns, as declared (one spelling each).
    let transformedTables: [String]
    /// The connection this transform is installed on (it owns the transform).
    private unowned let connection: Connection
    private var primaryKeys: [FoldedName: PrimaryKey] = [:]
    /// The active key's check value (``FieldKeyCheck``), derived once.
    private var activeKeyCheck: [UInt8]?

    struct PrimaryKey {
        /// The table's name as the schema spells it.
        let table: String
        /// The primary key's columns, in declaration order; empty without one.
        let columns: [String]
        /// Each key column's type affinity (SQLite's rules, from the declared type).
        let affinities: [Affinity]
        /// Every column's, by folded name.
        let columnAffinities: [FoldedName: Affinity]
        /// True for a single `INTEGER PRIMARY KEY` of a rowid table (the
        /// rowid), which SQLite assigns when none is given.
        let isRowid: Bool
        /// The queries for the rowid SQLite would assign (see `assignRowid`),
        /// built once: the largest rowid, and that or the largest ever used
        /// (`sqlite_sequence`, for AUTOINCREMENT).
        let largestRowidQueries: (rowid: String, everUsed: String)

        init(table: String, columns: [String], affinities: [Affinity], columnAffinities: [FoldedName: Affinity], isRowid: Bool) {
            (self.table, self.columns, self.affinities, self.columnAffinities, self.isRowid) = (table, columns, affinities, columnAffinities, isRowid)
            let quoted = SQLScript.quotedIdentifier(table)
            largestRowidQueries = ("SELECT coalesce(max(rowid), 0) FROM main.\(quoted)",
                                   "SELECT max(coalesce((SELECT max(rowid) FROM main.\(quoted)), 0), coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = ?), 0))")
        }
    }

    /// SQLite's column affinities (https://sqlite.org/datatype3.html, 3.1).
    enum Affinity {
        case integer, text, blob, real, numeric

        init(declaredType: String) {
            // ASCII letters only, as SQLite reads a type (`ﬂoat` is no FLOAT
            // to it), every other scalar written out: `TEXT` and a combining
            // accent is TEXT to SQLite, and one Character (no "TEXT" in it)
            // to Swift's `contains`.
            let type = declaredType.asciiUppercased
            if type.contains("INT") { self = .integer }
            else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { self = .text }
            else if type.contains("BLOB") || type.isEmpty { self = .blob }
            else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { self = .real }
            else { self = .numeric }
        }

        /// True when SQLite stores `value` unchanged in a column of this
        /// affinity: the value a sealed value or a row signature is bound
        /// to is then the one a read finds. Conservative: a value SQLite
        /// might convert on either engine is not kept.
        /// - NaN is stored as NULL, in any column.
        /// - TEXT turns numbers into text; INTEGER and NUMERIC turn an
        ///   integral REAL (-0.0 too) into an integer; REAL turns an integer
        ///   into a REAL, and -0.0 into 0.0; all three turn text that reads
        ///   as a number (spaces around it included) into one.
        func keeps(_ value: DatabaseValue) -> Bool {
            switch (self, value) {
            case (_, .null), (_, .blob): return true
            case (_, .real(let x)) where x.isNaN: return false
            case (.blob, _): return true
            case (.text, .text): return true
            case (.text, _): return false
            case (.integer, .integer), (.numeric, .integer): return true
            case (.integer, .real(let x)), (.numeric, .real(let x)): return x.isInfinite || x.rounded(.towardZero) != x
            case (.real, .real(let x)): return !(x == 0 && x.sign == .minus)
            case (.real, .integer): return false
            case (.integer, .text(let text)), (.numeric, .text(let text)), (.real, .text(let text)): return !Self.readsAsNumber(text)
            }
        }

        /// True when `text` may be taken for a number by a column of
        /// numeric affinity: optional spaces, a sign, digits with an
        /// optional point, an optional exponent (one without digits counts,
        /// to be safe), optional spaces.
        static func readsAsNumber(_ text: String) -> Bool {
            let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
            var bytes = Array(text.utf8)[...]
            while let first = bytes.first, isSpace(first) { bytes.removeFirst() }
            while let last = bytes.last, isSpace(last) { bytes.removeLast() }
            if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") { bytes.removeFirst() }
            var digits = 0
            while let first = bytes.first, (0x30...0x39).contains(first) { bytes.removeFirst(); digits += 1 }
            if bytes.first == UInt8(ascii: ".") {
                bytes.removeFirst()
                while let first = bytes.first, (0x30...0x39).contains(first) { bytes.removeFirst(); digits += 1 }
            }
            guard digits > 0 else { return false }
            if let first = bytes.first, first == UInt8(ascii: "e") || first == UInt8(ascii: "E") {
                bytes.removeFirst()
                if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes.removeFirst() }
                while let first = bytes.first, (0x30...0x39).contains(first) { bytes.removeFirst() }
            }
            return bytes.isEmpty
        }
    }

    /// Blind indexes by folded table name: each `indexed` column's own, then
    /// the declared ones.
    let indexes: [FoldedName: [BlindIndex]]
    /// The row keys the application declared (``Configuration/seal(_:indexes:keyring:context:rowKeys:signedRows:)``),
    /// by folded table name: what inserts bind values to, and what a
    /// declared property without its own row key opens with. Never read
    /// from the database.
    let rowKeys: [FoldedName: [String]]
    /// Lookups made SQL (``BlindIndexQuery``), by their shape.
    var lookups: [BlindIndexQuery.Shape: BlindIndexQuery.Compiled] = [:]
    /// The last lookup's, checked first: a loop of lookups of one shape
    /// hashes nothing.
    var lastLookup: BlindIndexQuery.Compiled?
    /// The keys a lookup's probe is computed under: the active one first,
    /// then the others (rows not yet rotated).
    let probeKeyIDs: [UInt32]

    /// The tables whose rows are signed (``SignedRow``), by folded name.
    let signedRows: [FoldedName: RowSignature.Layout]

    init(columns: [SealedColumn], indexes declared: [BlindIndex] = [], cipher: FieldCipher, connection: Connection,
         rowKeys: [String: [String]] = [:], signedRows: [SignedRow] = []) {
        self.rowKeys = Dictionary(rowKeys.map { ($0.key.sqliteFolded, $0.value) }, uniquingKeysWith: { first, _ in first })
        var byTable: [FoldedName: [FoldedName: SealedColumn]] = [:]
        for column in columns {
            byTable[column.table.sqliteFolded, default: [:]][column.column.sqliteFolded] = column
        }
        self.columns = byTable
        self.declaredColumns = columns
        var tables: [FoldedName: String] = [:]
        for column in columns where tables[column.table.sqliteFolded] == nil { tables[column.table.sqliteFolded] = column.table }
        self.transformedTables = tables.values.sorted()
        var indexes: [FoldedName: [BlindIndex]] = [:]
        for index in columns.compactMap(\.columnIndex) + declared {
            indexes[index.table.sqliteFolded, default: []].append(index)
        }
        self.indexes = indexes
        self.cipher = cipher
        let keyring = cipher.keyring
        probeKeyIDs = [keyring.activeKeyID] + keyring.keyIDs.filter { $0 != keyring.activeKeyID }
        self.signedRows = Dictionary(signedRows.map { ($0.table.sqliteFolded, RowSignature.Layout($0, sealing: columns, cipher: cipher)) },
                                     uniquingKeysWith: { first, _ in first })
        self.connection = connection
    }

    /// Names as spelled in queries, to the sealed column they fold to (nil:
    /// not sealed): folding allocates, and reads ask for every value.
    private var spelled = ColumnNameCache<SealedColumn?>()

    private func sealed(_ column: String, of table: String) -> SealedColumn? {
        spelled.value(table: table, column: column) { columns[table.sqliteFolded]?[column.sqliteFolded] }
    }

    /// The sealed column `table.column`, as declared; nil: not sealed.
    func sealedColumn(_ column: String, of table: String) -> SealedColumn? { sealed(column, of: table) }

    /// Whether `table.column` is one of the sealed columns.
    func isSealed(_ column: String, of table: String) -> Bool { sealed(column, of: table) != nil }

    /// `table`'s row key for an insert: the declared columns (the
    /// configuration's `rowKeys`), with the types the table gives them, so
    /// that a value is bound to what SQLite will store.
    func primaryKey(of table: String) throws(StrongroomError) -> PrimaryKey {
        if let known = primaryKeys[table.sqliteFolded] { return known }
        let quoted = SQLScript.quotedIdentifier(table)
        // The types the table declares (a type steers only SQLite's
        // conversion of a key value, and whether the rowid is the key; never
        // which columns are the key).
        var types: [FoldedName: (type: String, pk: Int)] = [:]
        for row in try connection.fetchAll(sql: "PRAGMA main.table_info(\(quoted))") {
            types[try row.decode(String.self, column: "name").sqliteFolded] = (try row.decode(String?.self, column: "type") ?? "", try row.decode(Int.self, column: "pk"))
        }
        // The spelling sqlite_sequence uses, and whether the table has a rowid
        // (a WITHOUT ROWID table's INTEGER PRIMARY KEY is an ordinary column).
        let spelled = try connection.fetchOne(String.self, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                                              arguments: [table]) ?? table
        let hasRowid = (try? connection.prepare(sql: "SELECT rowid FROM main.\(quoted) LIMIT 0")) != nil
        let declared = rowKeys[table.sqliteFolded] ?? []
        let affinities = declared.map { Affinity(declaredType: types[$0.sqliteFolded]?.type ?? "") }
        let single = declared.count == 1 ? types[declared[0].sqliteFolded] : nil
        let key = PrimaryKey(table: spelled, columns: declared, affinities: affinities,
                             columnAffinities: types.mapValues { Affinity(declaredType: $0.type) },
                             isRowid: hasRowid && single?.pk == 1 && single?.type.asciiUppercased == "INTEGER")
        primaryKeys[table.sqliteFolded] = key
        return key
    }

    // MARK: ColumnTransform

    func bindsToRowKey(_ column: String, of table: String) -> Bool? {
        sealed(column, of: table).map { $0.mode != .deterministic }
    }

    func declaredRowKey(of table: String) -> [String]? {
        rowKeys[table.sqliteFolded]
    }

    func open(_ stored: DatabaseValue, column: String, table: String, context: [DatabaseValue]) throws -> DatabaseValue {
        try cipher.open(stored, table: table, column: column, rowKey: context, mode: sealed(column, of: table)?.mode)
    }

    /// The column and its cipher state are looked up here, once per statement.
    func blobOpener(forReading column: String, of table: String) -> BlobOpener? {
        let mode = sealed(column, of: table)?.mode
        let bound = cipher.bound(table, column)
        return { [cipher] bytes, context in
            try cipher.open(envelopeBytes: bytes, column: bound, table: table, columnName: column, rowKey: context, mode: mode)
        }
    }

    func transformsInserts(into table: String) -> Bool {
        columns[table.sqliteFolded] != nil
    }

    /// The active key's check value, derived on first use.
    private func activeCheck() throws -> [UInt8]? {
        if activeKeyCheck == nil { activeKeyCheck = try FieldKeyCheck.value(of: cipher.keyring.activeKeyID, in: cipher.keyring) }
        return activeKeyCheck
    }

    /// Set by ``writesBeforeInsert(into:connection:)`` when it found the
    /// active key recorded, for the `prepareInsert` that follows it at once
    /// on this connection: one lookup per insert, not two.
    private var activeKeyJustFoundRecorded = false

    func writesBeforeInsert(into table: String, connection: Connection) throws -> Bool {
        activeKeyJustFoundRecorded = false
        let folded = table.sqliteFolded
        // The declared indexes' record, written by the first insert (and a
        // unique index's check under the other keys, which reads only).
        if !indexesRecorded.contains(folded), indexes[folded]?.contains(where: { !$0.isIndexedColumnsOwn }) == true { return true }
        guard columns[folded] != nil, let check = try activeCheck() else { return false }
        activeKeyJustFoundRecorded = try FieldKeyCheck.isActiveKeyRecorded(of: cipher.keyring, check: check, in: connection)
        return !activeKeyJustFoundRecorded
    }

    func prepareInsert(into table: String, columns names: inout [String], values: inout [DatabaseValue], connection: Connection) throws {
        guard let shape = try beginWrite(into: table, names: names, connection: connection) else { return }
        // Recorded now, for this row (a rollback takes the record back).
        let unknownActiveKey = cipher.unknownActiveKey
        cipher.unknownActiveKey = nil
        defer { cipher.unknownActiveKey = unknownActiveKey }
        let key = shape.key
        var rowKey: [DatabaseValue] = []
        // The sealed column of each column appended to the insert's own.
        var appendedSealed: [SealedColumn?] = []
        if shape.needsRowKey {
            guard !key.columns.isEmpty else {
                throw FieldError(.misuse, "\(table) has sealed columns bound to their row, and the configuration declares no row key for it: declare it, configuration.seal(…, rowKeys: [\"\(table)\": [\"id\"]]) (its primary key, as your schema declares it).", table: table)
            }
            for (position, column) in key.columns.enumerated() {
                let index = shape.keyPositions[position]
                if let index, !values[index].isNull {
                    // The value bound must be the one stored: SQLite would convert
                    // an integer into a TEXT key, or '12' into an INTEGER one.
                    guard key.affinities[position].keeps(values[index]), !key.isRowid || values[index].isInteger else {
                        throw FieldError(.misuse, "Inserting into \(table): \(column) would be stored converted to its column's type, and the sealed values bound to it would not open; give \(column) a value of that type.", table: table, column: column)
                    }
                    rowKey.append(values[index])
                } else if key.isRowid {
                    // SQLite would assign the rowid after the row is written;
                    // the value must be sealed before. Assign it here, as SQLite
                    // would (past the largest rowid, and for AUTOINCREMENT past
                    // every one ever used), inside the insert's savepoint.
                    let id = try assignRowid(for: key, column: column, connection: connection)
                    // Appended: a key column is never sealed (checked with the shape).
                    if let index { values[index] = id } else { names.append(column); values.append(id); appendedSealed.append(nil) }
                    rowKey.append(id)
                } else {
                    throw FieldError(.misuse, "Inserting into \(table), whose sealed columns are bound to the primary key: give \(column) a value.", table: table)
                }
            }
        }
        // Every blind index of the table, from the plain values (a column the
        // insert leaves out is NULL), before they are sealed.
        if !shape.steps.isEmpty {
            try recordDeclaredIndexes(of: table, folded: shape.folded, connection: connection)
            var computed: [DatabaseValue] = []
            computed.reserveCapacity(shape.steps.count)
            for step in shape.steps {
                let inputs = step.parts.map { $0.map { values[$0] } ?? .null }
                var value = DatabaseValue.null
                if let transformed = try step.index.transformed(inputs, row: FieldCipher.row(rowKey)) {
                    value = try cipher.blindIndex(ofTransformed: transformed, for: step.index, keys: step.keys)
                    try refuseDuplicateUnderAnotherKey(step, inputs: transformed, table: table, connection: connection)
                }
                computed.append(value)
            }
            Self.place(Array(zip(shape.steps, computed)), in: &names, &values, appended: &appendedSealed)
        }
        try seal(&values, of: names, table: table, shape: shape, appended: appendedSealed, rowKey: rowKey)
        try sign(&names, &values, table: table, shape: shape, rowKey: rowKey, updating: false)
    }

    func prepareUpdate(of table: String, columns names: inout [String], values: inout [DatabaseValue], rowKey updateKey: [String], connection: Connection) throws {
        guard let shape = try beginWrite(into: table, names: names, connection: connection) else { return }
        let unknownActiveKey = cipher.unknownActiveKey
        cipher.unknownActiveKey = nil
        defer { cipher.unknownActiveKey = unknownActiveKey }
        let key = shape.key
        var rowKey: [DatabaseValue] = []
        if shape.needsRowKey {
            guard !key.columns.isEmpty else {
                throw FieldError(.misuse, "\(table) has sealed columns bound to their row, and the configuration declares no row key for it: declare it, configuration.seal(…, rowKeys: [\"\(table)\": [\"id\"]]) (its primary key, as your schema declares it).", table: table)
            }
            for (position, column) in key.columns.enumerated() {
                guard let index = shape.keyPositions[position], !values[index].isNull else {
                    throw FieldError(.misuse, "Updating \(table): give \(column) a value; it names the row, and its sealed values are bound to it.", table: table, column: column)
                }
                // The WHERE would match 12 for '12', and the values be bound to text.
                guard key.affinities[position].keeps(values[index]), !key.isRowid || values[index].isInteger else {
                    throw FieldError(.misuse, "Updating \(table): \(column) is given as a value of another type than its column's, which SQLite would convert to find the row, and the sealed values bound to it would not open; give \(column) a value of that type.", table: table, column: column)
                }
                rowKey.append(values[index])
            }
        }
        // The row itself, which a unique index's check under older keys leaves out.
        let row = updateKey.compactMap { column in
            names.firstIndex { $0.sqliteFolded == column.sqliteFolded }.map { (column: column, value: values[$0]) }
        }
        var appendedSealed: [SealedColumn?] = []
        if !shape.steps.isEmpty {
            try recordDeclaredIndexes(of: table, folded: shape.folded, connection: connection)
            var computed: [(step: IndexStep, value: DatabaseValue)] = []
            for step in shape.steps {
                let index = step.index
                let given = step.parts.map { $0 != nil }
                if !given.contains(true) {
                    // None of its columns changes: the index keeps its value.
                    if step.target != nil {
                        throw FieldError(.misuse, "Updating \(table) writes \(index.name), blind index \(index.name)'s column, and none of the columns it is computed from (\(index.parts.map(\.column).joined(separator: ", "))): leave it out; it is computed from them.", table: table, column: index.name)
                    }
                    continue
                }
                if given.contains(false) {
                    let missing = zip(index.parts, given).filter { !$1 }.map { $0.0.column }
                    throw FieldError(.misuse, "Updating \(table) gives some of the columns blind index \(index.name) is computed from and not \(missing.joined(separator: ", ")): give all of them (\(index.parts.map(\.column).joined(separator: ", "))), or none, so that the index is computed from the row's values.", table: table, column: missing[0])
                }
                let inputs = step.parts.map { values[$0!] }
                var value = DatabaseValue.null
                if let transformed = try index.transformed(inputs, row: FieldCipher.row(rowKey)) {
                    value = try cipher.blindIndex(ofTransformed: transformed, for: index, keys: step.keys)
                    try refuseDuplicateUnderAnotherKey(step, inputs: transformed, table: table, connection: connection, excluding: row)
                }
                computed.append((step, value))
            }
            Self.place(computed, in: &names, &values, appended: &appendedSealed)
        }
        try seal(&values, of: names, table: table, shape: shape, appended: appendedSealed, rowKey: rowKey)
        try sign(&names, &values, table: table, shape: shape, rowKey: rowKey, updating: true)
    }

    /// Puts each index value computed in the row: in the index's column
    /// when the write gives it, else appended (with the sealed column of the
    /// index's name, if any, for ``seal(_:of:table:shape:appended:rowKey:)``).
    private static func place(_ computed: [(step: IndexStep, value: DatabaseValue)], in names: inout [String], _ values: inout [DatabaseValue],
                              appended: inout [SealedColumn?]) {
        for (step, value) in computed {
            if let target = step.target {
                values[target] = value
            } else {
                names.append(step.index.name)
                values.append(value)
                appended.append(step.sealedColumn)
            }
        }
    }

    /// What an insert or an update does first: the shape of its columns
    /// (nil: the table seals nothing), and, unless ``writesBeforeInsert(into:connection:)``
    /// just found it there, the active key recorded: on every write, inside
    /// its transaction (in a savepoint when it writes the record, so that a
    /// rolled-back write takes it back), the database learns the key the row
    /// is about to be sealed under, or refuses a keyring it does not know.
    private func beginWrite(into table: String, names: [String], connection: Connection) throws -> InsertShape? {
        let recordedJustNow = activeKeyJustFoundRecorded
        activeKeyJustFoundRecorded = false
        guard let shape = try insertShape(table: table, names: names) else { return nil }
        if !recordedJustNow, let check = try activeCheck() {
            try FieldKeyCheck.recordActiveKey(of: cipher.keyring, check: check, context: cipher.context, declared: declaredColumns, rowKeys: rowKeys, in: connection)
        }
        return shape
    }

    /// Seals each sealed column of the row, bound to `rowKey`: the write's
    /// own columns as the shape found them, then those appended to it (a
    /// rowid, an index's), as `appended` says.
    private func seal(_ values: inout [DatabaseValue], of names: [String], table: String, shape: InsertShape, appended: [SealedColumn?],
                      rowKey: [DatabaseValue]) throws {
        for index in names.indices {
            let sealed = index < shape.sealed.count ? shape.sealed[index] : appended[index - shape.sealed.count]
            guard let sealed else { continue }
            values[index] = try cipher.seal(values[index], table: table, column: sealed.column, rowKey: rowKey, mode: sealed.mode)
        }
    }

    /// What inserts of the same columns into a table share, worked out once
    /// (a record type inserts the same columns every time): its primary
    /// key, which of the insert's columns are sealed, where the key's
    /// columns are among them, and its blind indexes' steps.
    struct InsertShape {
        let names: [String]
        let folded: FoldedName
        let key: PrimaryKey
        let needsRowKey: Bool
        /// The sealed column at each of the insert's columns (nil: plain).
        let sealed: [SealedColumn?]
        /// Where each of the key's columns is among the insert's columns.
        let keyPositions: [Int?]
        /// The table's blind indexes, in order.
        let steps: [IndexStep]
    }

    /// The last insert's shape, per table as spelled (byte for byte, as
    /// SQLite compares names: Swift's == takes two normalizations of a name,
    /// two columns to SQLite, as one).
    private var insertShapes: [ExactText: InsertShape] = [:]

    /// The same column names, byte for byte.
    static func sameNames(_ a: [String], _ b: [String]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { ExactText($0) == ExactText($1) }
    }

    /// nil for a table with no sealed column.
    private func insertShape(table: String, names: [String]) throws -> InsertShape? {
        if let known = insertShapes[ExactText(table)], Self.sameNames(known.names, names) { return known }
        let folded = table.sqliteFolded
        guard let sealedColumns = columns[folded] else { return nil }
        let key = try primaryKey(of: table)
        if let keyColumn = key.columns.first(where: { sealedColumns[$0.sqliteFolded] != nil }) {
            throw FieldError(.misuse, "\(table).\(keyColumn) is part of the primary key, which sealed values are bound to: it cannot be sealed itself.", table: table, column: keyColumn)
        }
        let needsRowKey = sealedColumns.values.contains { $0.mode != .deterministic } || signedRows[folded] != nil
        let given = names.map(\.sqliteFolded)
        let keyPositions = key.columns.map { given.firstIndex(of: $0.sqliteFolded) }
        // The columns the indexes see: the insert's, then a rowid it leaves
        // out, which prepareInsert assigns and appends before they run.
        var seen = names
        if needsRowKey && key.isRowid {
            for (position, column) in key.columns.enumerated() where keyPositions[position] == nil { seen.append(column) }
        }
        let shape = InsertShape(names: names, folded: folded, key: key, needsRowKey: needsRowKey,
                                sealed: given.map { sealedColumns[$0] }, keyPositions: keyPositions,
                                steps: try indexSteps(table: table, folded: folded, names: seen))
        insertShapes[ExactText(table)] = shape
        return shape
    }

    /// One blind index of an insert: where its parts are among the
    /// insert's columns (nil: left out, so NULL), and where its own column is
    /// (nil: appended).
    /// A class: each insert's loop over the steps shares them rather than
    /// copying (retaining) each index's definition.
    final class IndexStep {
        let index: BlindIndex
        let keys: FieldCipher.IndexKeys
        let parts: [Int?]
        let target: Int?
        /// The sealed column of the index's name, were one declared so (for
        /// an appended index column: looked up once, here).
        let sealedColumn: SealedColumn?

        init(index: BlindIndex, keys: FieldCipher.IndexKeys, parts: [Int?], target: Int?, sealedColumn: SealedColumn?) {
            self.index = index
            self.keys = keys
            self.parts = parts
            self.target = target
            self.sealedColumn = sealedColumn
        }
    }

    /// The steps of `table`'s blind indexes for an insert of `names` (its
    /// columns as the indexes see them).
    private func indexSteps(table: String, folded: FoldedName, names: [String]) throws(FieldError) -> [IndexStep] {
        guard let indexes = indexes[folded] else { return [] }
        let given = names.map(\.sqliteFolded)
        var steps: [IndexStep] = []
        for index in indexes {
            let keys = cipher.indexKeys(index)
            let target = given.firstIndex(of: index.name.sqliteFolded)
            // A record that writes the index's column itself would lose its
            // value to the index (an indexed column's own index keeps the
            // first format's behaviour: its column is the index's alone).
            if let target, !index.isIndexedColumnsOwn {
                throw FieldError(.misuse, "Inserting into \(table) writes column \(names[target]), which is blind index \(index.name)'s: the index would replace the value. Rename the index, or leave the column out of the record.", table: table, column: names[target])
            }
            steps.append(IndexStep(index: index, keys: keys, parts: index.parts.map { given.firstIndex(of: $0.column.sqliteFolded) }, target: target,
                                   sealedColumn: columns[folded]?[index.name.sqliteFolded]))
        }
        return steps
    }

    /// Tables whose declared indexes this connection found recorded by
    /// another connection (committed: they stay).
    private var indexesRecorded: Set<FoldedName> = []
    /// Tables whose declared indexes this connection recorded itself. A
    /// rollback (of the transaction, or of a savepoint around the write)
    /// takes the record back without a word to the connection, so these are
    /// looked up again at each insert, never taken as recorded for good.
    private var indexesRecordedHere: Set<FoldedName> = []

    /// The declared indexes of `table` the registry lacks, recorded (with
    /// their check) by the first insert into it on this connection, inside
    /// its savepoint: so that rotation rebuilds them and retiring a key
    /// counts their values, even when only the configuration declares them.
    /// `ready` when the table is empty, else `building` (rows inserted before
    /// hold no value: `strongroom fields index rebuild`).
    private func recordDeclaredIndexes(of table: String, folded: FoldedName, connection: Connection) throws {
        guard !indexesRecorded.contains(folded) else { return }
        let declared = (indexes[folded] ?? []).filter { !$0.isIndexedColumnsOwn }
        var recordedNow = false
        for index in declared where try BlindIndexRegistry.entry(index.name, of: index.table, in: connection) == nil {
            let empty = try connection.fetchOne(Int.self, sql: "SELECT count(*) FROM (SELECT 1 FROM main.\(SQLScript.quotedIdentifier(index.table)) LIMIT 1)") == 0
            try BlindIndexRegistry.record(index, state: empty ? .ready : .building, cipher: cipher, in: connection)
            recordedNow = true
        }
        if recordedNow {
            indexesRecordedHere.insert(folded)
        } else if !indexesRecordedHere.contains(folded) {
            indexesRecorded.insert(folded)
        }
    }

    /// For a unique index: no row may hold the value under another key of
    /// the keyring either (its SQL index compares key id and tag together).
    /// `excluding`: the row an update writes (its key columns and values),
    /// which may hold the value under an older key itself.
    private func refuseDuplicateUnderAnotherKey(_ step: IndexStep, inputs: [DatabaseValue], table: String, connection: Connection,
                                                excluding row: [(column: String, value: DatabaseValue)] = []) throws {
        guard step.index.unique, probeKeyIDs.count > 1 else { return }
        let quoted = SQLScript.quotedIdentifier
        // IS: a row whose key column is NULL is another row (`=` would be NULL, and NOT NULL leave it out).
        let other = row.isEmpty ? "" : " AND NOT (" + row.enumerated().map { "\(quoted($1.column)) IS ?\($0 + 2)" }.joined(separator: " AND ") + ")"
        for keyID in probeKeyIDs.dropFirst() {
            let value = try cipher.blindIndex(ofTransformed: inputs, for: step.index, keys: step.keys, keyID: keyID)
            let taken = try connection.fetchOne(Int.self, sql: "SELECT count(*) FROM (SELECT 1 FROM main.\(quoted(step.index.table)) WHERE \(quoted(step.index.name)) = ?1\(other) LIMIT 1)",
                                                arguments: StatementArguments([value as any DatabaseValueConvertible] + row.map { $0.value as any DatabaseValueConvertible }))
            if taken == 1 {
                throw StrongroomError(.uniqueConstraint, "UNIQUE constraint failed: \(table).\(step.index.name): a row holds the same value, indexed under field key \(keyID) (not yet rotated).", path: connection.path)
            }
        }
    }

    /// The rowid SQLite would give the row (past the largest rowid, and for
    /// AUTOINCREMENT past every one ever used), in one statement: whether the
    /// table is AUTOINCREMENT is read from the loaded schema, not queried.
    private func assignRowid(for key: PrimaryKey, column: String, connection: Connection) throws(StrongroomError) -> DatabaseValue {
        let next: Int64
        let (sql, arguments): (String, StatementArguments) = connection.isAutoincrement(column, of: key.table)
            ? (key.largestRowidQueries.everUsed, StatementArguments(values: [.text(key.table)]))
            : (key.largestRowidQueries.rowid, .none)
        // Read as stored; anything but an integer (an `sqlite_sequence`
        // edited to hold text) goes through the decoder, which names it.
        if case .integer(let largest) = try connection.firstValue(sql: sql, arguments: arguments) {
            next = largest
        } else {
            next = try connection.fetchOne(Int64.self, sql: sql, arguments: arguments) ?? 0
        }
        guard next < Int64.max else {
            throw StrongroomError(.constraint, "\(key.table) has no rowid left to assign; give the primary key a value.", path: connection.path)
        }
        return .integer(next + 1)
    }
}

private extension DatabaseValue {
    /// True for an integer: the only value a rowid key keeps.
    var isInteger: Bool {
        if case .integer = self { return true }
        return false
    }
}
