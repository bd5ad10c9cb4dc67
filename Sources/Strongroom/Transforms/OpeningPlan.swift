internal import CSQLCipher

/// What a plan opens is asked for by: a type's declaration, or the
/// ``SealedProperty`` list of an explicit ``Row`` read.
enum OpeningRequest: Equatable {
    /// A `Decodable` type's declaration (its properties found by coding key).
    case type(ObjectIdentifier)
    /// A ``TableRecord``'s, read by position.
    case record(ObjectIdentifier)
    case properties([SealedProperty])
}

/// Which result columns of a statement a read opens, and where their
/// row-key values are: worked out once per statement and declaration, from
/// the declaration and the result's column names only.
final class OpeningPlan {
    /// A class: each row's loop over the columns shares it, rather than
    /// copying (retaining) its names, indexes and opener.
    final class Column {
        /// The declared property.
        let property: SealedProperty
        /// Where the property's value is among the result columns.
        let index: Int
        /// Where each of its row key's properties is (empty: bound to no row).
        let contextIndexes: [Int]
        /// Other result columns of a row key property's name (`rowid, *`
        /// names the key twice): (position in the context, column). Each
        /// must hold the key's value in every row, or which key the record
        /// holds cannot be told. Empty for almost every query.
        let keyCopies: [(key: Int, index: Int)]
        /// The transform's opener for this column's BLOBs, if it has one.
        let blobOpener: BlobOpener?

        var table: String { property.table }
        var column: String { property.column }

        init(property: SealedProperty, index: Int, contextIndexes: [Int], keyCopies: [(key: Int, index: Int)], blobOpener: BlobOpener?) {
            self.property = property
            self.index = index
            self.contextIndexes = contextIndexes
            self.keyCopies = keyCopies
            self.blobOpener = blobOpener
        }
    }

    /// Refuses a row in which a row key property's name holds two values
    /// (a joined table's column of that name, in another case or spelling
    /// SQLite takes for the same name): the record could hold one key while
    /// the value opens under the other.
    func checkKeyCopies(_ column: Column, context: [DatabaseValue], statement: Statement, value: (Int) -> DatabaseValue) throws(StrongroomError) {
        for copy in column.keyCopies where !value(copy.index).isStored(as: context[copy.key]) {
            let key = column.property.rowKey ?? []
            let name = copy.key < key.count ? key[copy.key] : statement.columnNames[column.contextIndexes[copy.key]]
            throw StrongroomError(.misuse, "The query's result holds columns \(column.contextIndexes[copy.key] + 1) and \(copy.index + 1) under the name \(name), which holds the row key of the sealed \(column.property.name), and this row holds two values there: which one the record holds cannot be told. Nothing was opened; select the key once, by name.",
                                  path: statement.connection.path, sql: statement.sql)
        }
    }

    /// One signed table's rows in the result: where its signature, the
    /// columns it covers and its row key are. Checked once per row, before
    /// any value of the row is opened or handed out.
    final class SignatureCheck {
        let verify: RowSignatureVerifier
        let signatureIndex: Int
        let coveredIndexes: [Int]
        let keyIndexes: [Int]
        /// The current row's values of the key and the covered columns:
        /// arrays kept from row to row, overwritten in place.
        var rowKey: [DatabaseValue]
        var covered: [DatabaseValue]

        init(verify: @escaping RowSignatureVerifier, signatureIndex: Int, coveredIndexes: [Int], keyIndexes: [Int]) {
            self.verify = verify
            self.signatureIndex = signatureIndex
            self.coveredIndexes = coveredIndexes
            self.keyIndexes = keyIndexes
            self.rowKey = Array(repeating: .null, count: keyIndexes.count)
            self.covered = Array(repeating: .null, count: coveredIndexes.count)
        }
    }

    /// Checks the row signature of each signed table the plan opens a
    /// value of; `value` gives the row's stored values.
    func verifySignatures(statement: Statement, value: (Int) -> DatabaseValue) throws(StrongroomError) {
        for check in signatures {
            for k in check.keyIndexes.indices { check.rowKey[k] = value(check.keyIndexes[k]) }
            for k in check.coveredIndexes.indices { check.covered[k] = value(check.coveredIndexes[k]) }
            // Let go of the row's values (envelopes) after the check.
            defer {
                for k in check.rowKey.indices { check.rowKey[k] = .null }
                for k in check.covered.indices { check.covered[k] = .null }
            }
            do {
                try check.verify(value(check.signatureIndex), check.covered, check.rowKey)
            } catch let error as StrongroomError {
                throw error
            } catch {
                throw StrongroomError(.sealedValue, "\(error) Nothing of the row was read.", path: statement.connection.path, sql: statement.sql)
            }
        }
    }

    let request: OpeningRequest
    let transform: any ColumnTransform
    let columns: [Column]
    /// The signed tables whose rows the plan checks (empty for almost every read).
    let signatures: [SignatureCheck]
    /// The rows' layout: the statement's column names, and the properties
    /// opened (a ``Row`` decodes a record only when they are the record's).
    let layout: RowLayout

    init(request: OpeningRequest, transform: any ColumnTransform, columns: [Column], signatures: [SignatureCheck], layout: RowLayout) {
        self.request = request
        self.transform = transform
        self.columns = columns
        self.signatures = signatures
        self.layout = layout
    }

    /// `values` (one row, as stored) as the app sees them.
    func open(_ values: inout [DatabaseValue], statement: Statement) throws(StrongroomError) {
        let stored = values
        if !signatures.isEmpty { try verifySignatures(statement: statement) { stored[$0] } }
        for column in columns {
            let context = column.contextIndexes.map { stored[$0] }
            if !column.keyCopies.isEmpty { try checkKeyCopies(column, context: context, statement: statement) { stored[$0] } }
            // A BLOB through the column's opener, worked out with the plan:
            // not looked up by name for every value.
            if let opener = column.blobOpener, case .blob(let bytes) = stored[column.index] {
                do {
                    values[column.index] = try bytes.withUnsafeBytes { try opener($0, context) }
                } catch let error as StrongroomError {
                    throw error
                } catch {
                    throw StrongroomError(.sealedValue, "\(error)", path: statement.connection.path, sql: statement.sql)
                }
                continue
            }
            values[column.index] = try open(column, stored: stored[column.index], context: context, statement: statement)
        }
    }

    /// The current row's value of `column`, as the app sees it: a BLOB is
    /// handed over as SQLite's bytes, without a copy.
    func open(_ column: Column, context: [DatabaseValue], statement: Statement) throws(StrongroomError) -> DatabaseValue {
        let index = Int32(column.index)
        guard let opener = column.blobOpener, statement.columnType(at: index) == SQLITE_BLOB else {
            return try open(column, stored: statement.databaseValue(at: index), context: context, statement: statement)
        }
        do {
            return try statement.withBlobBytes(at: index) { bytes in try opener(bytes, context) }
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.sealedValue, "\(error)", path: statement.connection.path, sql: statement.sql)
        }
    }

    /// One stored value of `column`, as the app sees it.
    func open(_ column: Column, stored: DatabaseValue, context: [DatabaseValue], statement: Statement) throws(StrongroomError) -> DatabaseValue {
        do {
            return try transform.open(stored, column: column.column, table: column.table, context: context)
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.sealedValue, "\(error)", path: statement.connection.path, sql: statement.sql)
        }
    }
}

extension Statement {
    /// The plan that opens `properties` (declared by `owner`, for messages)
    /// in this statement's rows: nil when none of them is selected.
    ///
    /// Each declared property is looked up by name among the result
    /// columns, as the decoder finds it; its row key's properties likewise,
    /// so the key a value opens with is the one the record holds. A declared
    /// name the result holds twice is refused, as is a row-key property the
    /// result lacks, or a column the connection does not seal.
    func makeOpeningPlan(_ request: OpeningRequest, properties: [SealedProperty], owner: String) throws(StrongroomError) -> OpeningPlan? {
        // At the start of a sentence.
        let Owner = owner.prefix(1).uppercased() + owner.dropFirst()
        func refuse(_ message: String) -> StrongroomError {
            StrongroomError(.misuse, message + " Nothing was read.", path: connection.path, sql: sql)
        }
        guard !properties.isEmpty else { return nil }
        guard let transform = connection.columnTransform else {
            throw refuse("\(Owner) declares sealed properties (\(properties.map(\.description).joined(separator: "; "))) and this connection opens none: configure it with configuration.seal(…, keyring:) for them. A connection without the field keyring reads no record with sealed properties (read the stored values as Data instead).")
        }
        let layout = rowLayout
        var columns: [OpeningPlan.Column] = []
        for (position, property) in properties.enumerated() {
            if properties[..<position].contains(where: { $0.name.sqliteFolded == property.name.sqliteFolded }) {
                throw refuse("\(Owner) declares the sealed property \(property.name) twice; declare each property once.")
            }
            guard let bindsToRowKey = transform.bindsToRowKey(property.column, of: property.table) else {
                throw refuse("\(Owner) declares \(property.name) sealed as \(property.table).\(property.column), which this connection does not seal: add it to the columns of configuration.seal(…), or correct the declaration.")
            }
            // A property the query does not select: a record reading it fails
            // as it decodes (an optional one is nil).
            guard let index = layout.index(of: property.name) else { continue }
            if layout.isAmbiguous(property.name) {
                let spellings = layout.columnNames.enumerated().filter { $0.element.sqliteFolded == property.name.sqliteFolded }
                throw refuse("The query's result holds \(spellings.count) columns named \(property.name) (columns \(spellings.map { String($0.offset + 1) }.joined(separator: ", "))), and \(owner) declares \(property.name) sealed: which one holds the sealed value cannot be told (whoever holds the database key can add a plain column of that name to a joined table). Select it once, by name, rather than * over a join.")
            }
            var contextIndexes: [Int] = []
            var keyCopies: [(key: Int, index: Int)] = []
            if bindsToRowKey {
                guard let keyNames = property.rowKey ?? transform.declaredRowKey(of: property.table), !keyNames.isEmpty else {
                    throw refuse("\(Owner)'s sealed \(property.name) (\(property.table).\(property.column)) is bound to its row's key, and neither the declaration nor the configuration names it: declare the row key, in configuration.seal(…, rowKeys: [\"\(property.table)\": [\"id\"]]) or in SealedProperty(…, rowKey:).")
                }
                for key in keyNames {
                    guard let keyIndex = layout.index(of: key) else {
                        throw refuse("The query selects \(property.name), which \(owner) declares sealed in \(property.table).\(property.column), without \(key), which holds the row key it is bound to: add \(key) to the SELECT list.")
                    }
                    // Another column of the name in another ASCII case (a
                    // joined table's `ID` beside `id`, or `Customer_ID`
                    // beside `customer_id`): the record's own spelling of
                    // the key may find it instead, so it must hold the same
                    // value in every row. Columns spelled as the declaration
                    // spells the key (a join's two `id`s) are found the same
                    // way by both: the leftmost.
                    if layout.isAmbiguous(key) {
                        for other in layout.columnNames.indices where other != keyIndex && layout.columnNames[other].sqliteFolded == key.sqliteFolded
                            && ExactText(layout.columnNames[other]) != ExactText(key) {
                            keyCopies.append((key: contextIndexes.count, index: other))
                        }
                    }
                    contextIndexes.append(keyIndex)
                }
            }
            columns.append(OpeningPlan.Column(property: property, index: index, contextIndexes: contextIndexes, keyCopies: keyCopies,
                                              blobOpener: transform.blobOpener(forReading: property.column, of: property.table)))
        }
        // A declared table's signed rows are checked even when the query
        // selects none of its sealed properties: the record's plain columns
        // of it are what a signature keeps.
        let signatures = try signatureChecks(of: properties, opened: columns, transform: transform, layout: layout, owner: owner, refuse: refuse)
        // Rows read with an explicit declaration keep it even when they open
        // nothing, so that a type that declares it decodes from them.
        if case .properties = request {} else if columns.isEmpty && signatures.isEmpty { return nil }
        return OpeningPlan(request: request, transform: transform, columns: columns, signatures: signatures,
                           layout: RowLayout(columnNames: layout.columnNames, opened: columns.map(\.property), declared: properties))
    }

    /// For each table of the declared `properties` whose rows the
    /// transform signs: where the result holds the signature, each column
    /// it covers and the row key, each found by name as the decoder finds a
    /// property (a sealed column the read opens under another name, at its
    /// property among `opened`). A read that leaves one out, or holds one of
    /// their names twice, is refused: the signature could not be checked, or
    /// not over what the record holds.
    private func signatureChecks(of properties: [SealedProperty], opened columns: [OpeningPlan.Column], transform: any ColumnTransform, layout: RowLayout,
                                 owner: String, refuse: (String) -> StrongroomError) throws(StrongroomError) -> [OpeningPlan.SignatureCheck] {
        var checks: [OpeningPlan.SignatureCheck] = []
        var seen: Set<FoldedName> = []
        for property in properties where !seen.contains(property.table.sqliteFolded) {
            let table = property.table
            seen.insert(table.sqliteFolded)
            guard let signed = transform.signedRowColumns(of: table) else { continue }
            guard let verify = transform.rowSignatureVerifier(of: table) else {
                throw refuse("\(table)'s rows are signed, and the connection's transform gives no function to check them.")
            }
            let declared = properties.filter { $0.table.sqliteFolded == table.sqliteFolded }
            let opened = columns.filter { $0.table.sqliteFolded == table.sqliteFolded }
            // One row of the table per result row: two (a join of the table
            // with itself) would share the covered columns' names.
            let keyNames = declared.map { $0.rowKey ?? transform.declaredRowKey(of: table) ?? [] }
            guard let key = keyNames.first, !key.isEmpty else {
                throw refuse("\(table)'s rows are signed, bound to their row key, and neither the declaration nor the configuration names it: declare it in configuration.seal(…, rowKeys:).")
            }
            // Two properties of one column (a deterministic one needs no row
            // key to tell them apart): two rows of the table, the second unchecked.
            for (position, property) in declared.enumerated()
            where declared[..<position].contains(where: { $0.column.sqliteFolded == property.column.sqliteFolded }) {
                throw refuse("\(owner) declares two properties of \(table).\(property.column) (two rows of \(table) in one result, as a self-join reads them), and \(table)'s rows are signed: one row's signature covers the columns of its own row only, and the other row would be read unchecked. Read each row of \(table) in its own query.")
            }
            if keyNames.contains(where: { $0.map(ExactText.init) != key.map(ExactText.init) }) {
                throw refuse("\(owner) declares sealed properties of \(table) with different row keys (two rows of \(table) in one result), and \(table)'s rows are signed: the columns the signature covers cannot be told apart. Read each row of \(table) in its own query.")
            }
            func find(_ name: String, _ what: String) throws(StrongroomError) -> Int {
                guard let index = layout.index(of: name) else {
                    throw refuse("\(table)'s rows are signed (\(signed.signature)), \(owner) declares sealed properties of it, and the query selects no \(name), \(what): select \(([signed.signature] + signed.covered + key).joined(separator: ", ")), each once, by name, so that each row's signature is checked before it is read.")
                }
                if layout.isAmbiguous(name) {
                    throw refuse("The query's result holds more than one column named \(name), \(what) of \(table)'s signed rows: which one the record holds cannot be told. Select it once, by name, rather than * over a join.")
                }
                return index
            }
            var covered: [Int] = []
            for name in signed.covered {
                // A sealed column the read opens under another name: at its property.
                if let property = opened.first(where: { $0.column.sqliteFolded == name.sqliteFolded }) {
                    covered.append(property.index)
                } else {
                    covered.append(try find(name, "which the row signature covers"))
                }
            }
            var keyIndexes: [Int] = []
            for name in key { keyIndexes.append(try find(name, "which holds the row key the signature is bound to")) }
            checks.append(OpeningPlan.SignatureCheck(verify: verify, signatureIndex: try find(signed.signature, "which holds the row signature"),
                                                     coveredIndexes: covered, keyIndexes: keyIndexes))
        }
        return checks
    }
}
