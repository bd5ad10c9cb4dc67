internal import CSQLCipher

extension Connection {
    /// Compiles `sql` only to look at it (never to run it): `body` reads
    /// the compiled statement, and the reads the authorizer saw are returned
    /// with its result. Meanwhile the authorizer allows everything, so that
    /// SQL it would refuse can still be looked at; the statement compiles
    /// against the schema this connection has loaded, as the application's
    /// own statements do.
    func inspect<T>(sql: String, _ body: (OpaquePointer) throws(StrongroomError) -> T) throws(StrongroomError) -> (value: T, reads: [ReadAccess]) {
        _ = authorizer
        let outer = state.inspectedReads, outerInnermost = state.inspectedInnermost
        state.inspectedReads = []
        state.inspectedInnermost = []
        defer { state.inspectedReads = outer; state.inspectedInnermost = outerInnermost }
        var compiled: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &compiled, nil)
        state.noteCompiled(sql, length: nil)
        let reads = state.inspectedReads ?? []
        guard status == SQLITE_OK, let compiled else {
            sqlite3_finalize(compiled)
            throw lastError(status, sql: sql)
        }
        defer { sqlite3_finalize(compiled) }
        return (try body(compiled), reads)
    }

    /// Before a statement that writes and calls direct-only functions
    /// (``DatabaseFunction/isDirectOnly``) runs: refuses when the program
    /// SQLite compiled for it calls one of them more often than the
    /// statement's own text does. The program is read with `EXPLAIN`,
    /// compiled against the schema this connection has loaded, which is
    /// what the statement runs; on SQLite 3.15 it may differ from the schema
    /// stored (see `refuseSchemaCallingDirectOnlyFunctions`), and a DEFAULT,
    /// a CHECK constraint, an index expression or a foreign key's action
    /// loaded from it adds calls that the authorizer never sees, or counts
    /// as the statement's own.
    ///
    /// Then each table the statement reads or writes (as compiled here: a
    /// foreign key's action included) must have no DEFAULT, as loaded
    /// (`PRAGMA table_info`), that mentions one of them: SQLite can code a
    /// statement's own calls fewer times than its text makes them (a repeated
    /// ORDER BY term), which would leave the count room for a planted one.
    func refuseCallsTheTextDoesNotMake(_ statement: Statement) throws(StrongroomError) {
        guard let policy = authorizerPolicy, !policy.directOnlyFunctions.isEmpty else { return }
        let text = SQLTokens(statement.sql)
        // An EXPLAIN only lists a program: nothing of it runs.
        if text.isExplain { return }
        let explain = "EXPLAIN " + statement.sql
        let (called, touched) = try inspect(sql: explain) { program throws(StrongroomError) in
            var called: [String: Int] = [:]
            while true {
                let status = sqlite3_step(program)
                if status == SQLITE_DONE { break }
                guard status == SQLITE_ROW else { throw lastError(status, sql: explain) }
                // P4 of a function call reads "name(argument count)".
                guard let p4 = sqlite3_column_text(program, 5) else { continue }
                let text = AuthorizerPolicy.asciiLowercased(String(cString: p4))
                guard let open = text.firstIndex(of: "(") else { continue }
                let name = String(text[..<open])
                if policy.directOnlyFunctions[name] != nil { called[name, default: 0] += 1 }
            }
            return called
        }
        for (name, count) in called.sorted(by: { $0.key < $1.key }) where count > text.calls(of: name) {
            throw StrongroomError(.untrustedSchema, "The statement would call \(name)() \(count) time(s), its own text \(text.calls(of: name)): the schema this connection loaded adds the other calls (a DEFAULT, a CHECK constraint, an index expression or a foreign key's action), SQL the application did not write, or SQLite codes one of the statement's own calls more than once (an OR of indexed terms: compute the value in Swift and bind it instead). Nothing was run. The stored schema may read clean (on SQLite 3.15 a connection keeps running the schema it loaded): compare the database with its migrations (strongroom verify), find out who changed it, and open a new connection once it is repaired.", path: path, sql: statement.sql)
        }
        let names = policy.directOnlyFunctions.keys.sorted()
        var checked: Set<[String]> = []
        for access in touched {
            let table = [AuthorizerPolicy.asciiLowercased(access.schema), AuthorizerPolicy.asciiLowercased(access.table)]
            guard checked.insert(table).inserted else { continue }
            let info = try inspect(sql: "PRAGMA \(SQLScript.quotedIdentifier(access.schema)).table_info(\(SQLScript.quotedIdentifier(access.table)))") { pragma throws(StrongroomError) in
                var defaults: [(column: String, value: String)] = []
                while sqlite3_step(pragma) == SQLITE_ROW {
                    guard let column = sqlite3_column_text(pragma, 1), let value = sqlite3_column_text(pragma, 4) else { continue }
                    defaults.append((String(cString: column), String(cString: value)))
                }
                return defaults
            }.value
            for (column, value) in info {
                let lowered = Array(AuthorizerPolicy.asciiLowercased(value).utf8)
                guard let function = names.first(where: { AuthorizerPolicy.mentions(lowered, Array($0.utf8)) }) else { continue }
                throw StrongroomError(.untrustedSchema, "The DEFAULT of \(access.table).\(column), as this connection loaded the schema, calls \(function)(), which only the application's own statements may call: SQL the application did not write. Nothing was run. The stored schema may read clean (on SQLite 3.15 a connection keeps running the schema it loaded): find out who changed it, and open a new connection once it is repaired.", path: path, sql: statement.sql)
            }
        }
    }
}

extension Connection {
    /// Whether `column` of `table` in the main schema is an `INTEGER PRIMARY
    /// KEY AUTOINCREMENT` (SQLite then never reuses a rowid, and records the
    /// largest one used in `sqlite_sequence`). Read from the schema SQLite
    /// has loaded (`sqlite3_table_column_metadata`), without a statement;
    /// false when there is no such table or column.
    package func isAutoincrement(_ column: String, of table: String) -> Bool {
        guard !isClosed else { return false }
        var autoincrement: Int32 = 0
        let status = sqlite3_table_column_metadata(handle, "main", table, column, nil, nil, nil, nil, &autoincrement)
        return status == SQLITE_OK && autoincrement != 0
    }
}

extension Connection {
    /// The triggers and views a statement would run besides its own text,
    /// as this connection compiles it (SQLite's authorizer names the
    /// innermost trigger or view of each action it reports: every statement
    /// of a trigger's body reports one, a `SELECT RAISE(…)` too): compiled,
    /// never run. An UPDATE compiles only the triggers it fires (`UPDATE OF`
    /// another column's are left out); a foreign key's own action is not
    /// listed, though the triggers a cascade fires are. Sorted, each once.
    package func triggersAndViews(runBy sql: String) throws(StrongroomError) -> [String] {
        try inspect(sql: sql) { _ throws(StrongroomError) in state.inspectedInnermost.sorted() }.value
    }

    /// The columns a query reads, by table, as this connection compiles it
    /// (SQLite's authorizer reports each column read, through views
    /// included): compiled, never run.
    package func columnsRead(by sql: String) throws(StrongroomError) -> [(table: String, column: String)] {
        try inspect(sql: sql) { _ throws(StrongroomError) in () }.reads.filter { !$0.writes }.map { ($0.table, $0.column) }
    }
}
