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
        let outer = state.inspectedReads
        state.inspectedReads = []
        defer { state.inspectedReads = outer }
        var compiled: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &compiled, nil)
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
    func refuseCallsTheTextDoesNotMake(_ statement: Statement) throws(StrongroomError) {
        guard let policy = authorizerPolicy, !policy.directOnlyFunctions.isEmpty else { return }
        let explain = "EXPLAIN " + statement.sql
        let (called, _) = try inspect(sql: explain) { program throws(StrongroomError) in
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
        guard !called.isEmpty else { return }
        let text = SQLTokens(statement.sql)
        for (name, count) in called.sorted(by: { $0.key < $1.key }) where count > text.calls(of: name) {
            throw StrongroomError(.untrustedSchema, "The statement would call \(name)() \(count) time(s), its own text \(text.calls(of: name)): the schema this connection loaded adds the other calls (a DEFAULT, a CHECK constraint, an index expression or a foreign key's action), SQL the application did not write. Nothing was run. The stored schema may read clean (on SQLite 3.15 a connection keeps running the schema it loaded): compare the database with its migrations (strongroom verify), find out who changed it, and open a new connection once it is repaired.", path: path, sql: statement.sql)
        }
    }
}
