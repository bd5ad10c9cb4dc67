/// Binding `Encodable` records and decoding rows into `Decodable` values.
extension Statement {
    /// Binds the properties of `record` to the statement's named parameters
    /// (`:property`) and runs it.
    ///
    /// ```swift
    /// struct Person: Codable { var id: Int; var name: String; var email: String? }
    /// let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, email) VALUES (:id, :name, :email)")
    /// try insert.execute(record: Person(id: 1, name: "Ada", email: nil))
    /// ```
    ///
    /// Properties the statement does not name are ignored; a parameter no
    /// property fills is an error.
    public func execute<Record: Encodable>(record: Record) throws(StrongroomError) {
        let bound = try bind(record: record).bound
        guard bound >= parameterCount else {
            throw StrongroomError(.misuse, "\(Record.self) fills \(bound) of the statement's \(parameterCount) parameters; every parameter must be named after a property (:name).",
                                  path: connection.path, sql: sql)
        }
        while try step() {}
    }

    /// Resets the statement and binds the properties of `record` to its
    /// parameters, each key to the parameter of its name; returns how many
    /// parameters the record filled and how many keys found none.
    ///
    /// No parameter is left holding the last record's value: when the record
    /// does not fill every parameter, the bindings are cleared (every
    /// parameter NULL) and the caller refuses to run the statement or binds
    /// it again. Up to 64 parameters, which the record filled is tracked one
    /// bit each, so a record that fills them all (the usual case) costs no
    /// `sqlite3_clear_bindings`; above 64, the bindings are cleared first.
    ///
    /// `kept`, when given, keeps the encoder's container from one record to
    /// the next (see ``KeptEncodingContainer``): given only by the owner of
    /// a statement it caches.
    func bind<Record: Encodable>(record: Record, keeping kept: KeptEncodingContainer? = nil) throws(StrongroomError) -> (bound: Int, unbound: Int) {
        reset()
        let tracked = parameterCount <= 64
        if !tracked { clearBindings() }
        encodingKeys.beginRecord()
        do {
            try record.encode(to: RecordEncoder(sink: self, kept: kept))
        } catch {
            clearBindings()
            if let error = error as? StrongroomError { throw error }
            throw StrongroomError(.conversion, "Cannot encode \(Record.self): \(error)", path: connection.path, sql: sql)
        }
        guard tracked else { return (encodingKeys.resolvedCount, encodingKeys.unresolvedCount) }
        let filled = encodingKeys.boundParameterCount
        if filled < parameterCount { clearBindings() }
        return (filled, encodingKeys.unresolvedCount)
    }

    /// Runs the statement and decodes every row into `T`.
    ///
    /// Struct properties are matched to columns by name; a `T` that is
    /// ``DatabaseValueConvertible`` (`Int`, `String`...) is read from the first column.
    public func fetchAll<T: Decodable>(_ type: T.Type, arguments: StatementArguments = .none) throws(StrongroomError) -> [T] {
        var results: [T] = []
        try forEach(type, arguments: arguments) { results.append($0) }
        return results
    }

    /// Runs the statement and decodes the first row into `T`, or returns nil.
    ///
    /// For a single value (`String`, `Int`, …), nil also stands for NULL:
    /// `fetchOne(String.self, sql: "SELECT title …")` is nil when there is no
    /// row and when the title is NULL. (`fetchAll` throws on NULL instead,
    /// naming the column: fetch `String?` there.)
    public func fetchOne<T: Decodable>(_ type: T.Type, arguments: StatementArguments = .none) throws(StrongroomError) -> T? {
        var result: T?
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        if try step() {
            let direct = T.self as? any DatabaseValueConvertible.Type
            // `String?` keeps telling NULL (.some(nil)) from no row (nil).
            // The stored value tells: a sealed (transformed) NULL stays NULL.
            if direct != nil, !(T.self is any OptionalType.Type), isNull(at: 0) { return nil }
            result = try decodeRow(type, direct: direct)
        }
        return result
    }

    /// Runs the statement and calls `body` with each row decoded into `T`,
    /// without keeping them all in memory.
    public func forEach<T: Decodable>(_ type: T.Type, arguments: StatementArguments = .none, _ body: (T) throws(StrongroomError) -> Void) throws(StrongroomError) {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        // Whether T reads a single column is decided once, not per row: one
        // loop each way. (With one loop and `direct` tested inside it, the
        // optimizer made the dynamic cast again on every row: a conformance
        // lookup measured at about 300 instructions a row.)
        if let direct = T.self as? any DatabaseValueConvertible.Type {
            while try step() {
                try body(try decodeRow(type, direct: direct))
            }
        } else {
            while try step() {
                try body(try decodeRow(type, direct: nil))
            }
        }
    }

    @inline(__always)
    func decodeRow<T: Decodable>(_ type: T.Type, direct: (any DatabaseValueConvertible.Type)?) throws(StrongroomError) -> T {
        // A TableRecord read where only `Decodable` is known (generic code,
        // a cursor) is read by position, as its own overloads read it: its
        // sealed properties are declared by column, and its coding keys may
        // name other columns (`apiKey` for `api_key`), which nothing opens.
        var plan: OpeningPlan?
        if direct == nil {
            let kind = try decodableKind(T.self)
            if kind.isRecord { return try decodeAsRecord(T.self) }
            plan = kind.plan
        }
        decodingKeys.beginRecord()
        // A type that declares sealed properties: they are opened, and the
        // row decoded from memory; every other read is straight from SQLite.
        let columns = try rowReader(plan)
        do {
            if let direct {
                return try RowDecoder.decodeConvertible(direct, at: 0, source: columns, key: nil) as! T
            }
            return try T(from: RowDecoder(source: columns))
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.conversion, "Cannot decode \(T.self) from a row: \(Self.describe(error))", path: connection.path, sql: sql)
        }
    }

    /// Whether `T` is a ``TableRecord`` (read by position), and else the
    /// plan that opens what it declares: worked out once per statement and
    /// type (the dynamic cast costs hundreds of instructions), one compare
    /// per row after that.
    @inline(__always)
    func decodableKind<T>(_ type: T.Type) throws(StrongroomError) -> (isRecord: Bool, plan: OpeningPlan?) {
        let id = ObjectIdentifier(T.self)
        if let kind = decodableState, kind.type == id { return (kind.isRecord, kind.plan) }
        return try makeDecodableKind(T.self)
    }

    @inline(never)
    private func makeDecodableKind<T>(_ type: T.Type) throws(StrongroomError) -> (isRecord: Bool, plan: OpeningPlan?) {
        let isRecord = T.self is any TableRecord.Type
        let plan = isRecord ? nil : try openingPlan(forDecoding: T.self)
        decodableState = (ObjectIdentifier(T.self), isRecord, plan)
        return (isRecord, plan)
    }

    /// The current row as `T`, a ``TableRecord``, read by position.
    @inline(never)
    func decodeAsRecord<T>(_ type: T.Type) throws(StrongroomError) -> T {
        let record = T.self as! any TableRecord.Type
        return try decodeOpenedRecord(record) as! T
    }

    private func decodeOpenedRecord<R: TableRecord>(_ type: R.Type) throws(StrongroomError) -> R {
        try decodeRecord(R.self)
    }

    /// A decoding error's explanation, without any value from the row.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(_, let context),
             DecodingError.valueNotFound(_, let context),
             DecodingError.typeMismatch(_, let context),
             DecodingError.dataCorrupted(let context):
            return context.debugDescription
        default:
            return String(describing: error)
        }
    }
}

extension Row {
    /// Decodes this row into `T`, matching properties to columns by name.
    public func decode<T: Decodable>(_ type: T.Type) throws(StrongroomError) -> T {
        // A TableRecord declares its sealed properties by column, and a Row
        // decodes by coding key, which may name another column: read it from
        // its query, by position.
        if let record = T.self as? any TableRecord.Type, !record.declaredSealedProperties.isEmpty {
            throw StrongroomError(.misuse, "\(T.self) is a TableRecord with sealed columns (\(record.declaredSealedProperties.map(\.name).joined(separator: ", "))), which a Row decodes by coding key, and its coding keys may name other columns than the sealed ones: read it from its query (fetchAll(\(T.self).self, sql: …)), by position. Nothing was read.")
        }
        // A type with sealed properties takes a row only as read under its
        // declaration: its selected properties opened, and the rows of the
        // signed tables it declares checked, even when none is selected.
        if let declared = declaredSealedProperties(of: T.self), !declared.isEmpty {
            // The same declaration (a lookup's rows, `opening: T.sealedProperties`) without building sets.
            guard layout.declared == declared || Set(declared).isSubset(of: Set(layout.declared)) else {
                throw StrongroomError(.misuse, "\(T.self) declares sealed properties (\(declared.map(\.description).joined(separator: "; "))), and this row was read \(layout.declared.isEmpty ? "without them (no opening:)" : "under another declaration (\(layout.declared.map(\.description).joined(separator: "; ")))"): read \(T.self) from the query itself (fetchAll(\(T.self).self, sql: …)), or fetch the rows with opening: \(T.self).sealedProperties. Nothing was read.")
            }
        }
        // The reader caches its keyed container, which points back at it:
        // break that cycle, or the reader and the row's values stay alive.
        let reader = RowColumnReader(row: self)
        defer { reader.clearContainerCache() }
        do {
            return try RowDecoder.decode(type, from: reader)
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.conversion, "Cannot decode \(T.self) from a row: \(Statement.describe(error))")
        }
    }
}

/// Marks `Optional`, so a fetch can tell `String?` from `String`.
protocol OptionalType {}
extension Optional: OptionalType {}
