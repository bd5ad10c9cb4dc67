internal import CSQLCipher

/// The connection's authorizer (`sqlite3_set_authorizer`: SQLite keeps one
/// per connection, called while a statement compiles), for two policies:
///
/// - **Direct-only functions** (``DatabaseFunction/isDirectOnly``): a
///   reference from a trigger or a view is refused, and each statement
///   records the direct-only functions its own text calls; while it steps,
///   only those may run (`ConnectionState.allowedDirectOnlyFunctions`),
///   which keeps them out of CHECK constraints, DEFAULTs and index
///   expressions, which SQLite compiles without asking the authorizer.
/// - **Key changes and plaintext copies** refused, for SQL someone typed
///   (`refuseKeyChangesAndPlaintextCopies`).
/// - **Writes from triggers** to tables a layer above keeps signed
///   (`refuseWritesFromTriggers(to:)`).
final class AuthorizerPolicy {
    /// Direct-only function names in ASCII lower case (SQLite's own folding
    /// of function names), each with its bit.
    var directOnlyFunctions: [String: UInt64] = [:]
    var refusesKeyChanges = false
    /// Tables (folded names) no trigger may write.
    var tablesTriggersMayNotWrite: Set<FoldedName> = []
    let state: ConnectionState

    init(state: ConnectionState) { self.state = state }

    /// SQLite's answer for one action.
    func authorize(_ action: Int32, _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?,
                   _ database: UnsafePointer<CChar>?, _ innermost: UnsafePointer<CChar>?) -> Int32 {
        if state.inspectedReads != nil {
            // A statement compiled only to be looked at: nothing runs.
            if let innermost { state.inspectedInnermost.insert(String(cString: innermost)) }
            let writes = action == SQLITE_INSERT || action == SQLITE_UPDATE || action == SQLITE_DELETE
            if action == SQLITE_READ || writes, let first {
                state.inspectedReads?.append(ReadAccess(table: String(cString: first), column: second.map { String(cString: $0) } ?? "",
                                                        schema: database.map { String(cString: $0) } ?? "main",
                                                        innermost: innermost.map { String(cString: $0) }, writes: writes))
            }
            return SQLITE_OK
        }
        if state.allowedDirectOnlyFunctions != 0 && !state.scanHoldsWhileStepping {
            // Called while a statement steps: SQLite is re-preparing it (for a
            // schema another connection changed after the check, or having
            // reset its own), against a schema the check may not have seen.
            // Its direct-only functions are withdrawn for this step;
            // `Statement.step` checks the schema and runs it again where that
            // is safe.
            state.allowedDirectOnlyFunctions = 0
            state.schemaChangedWhileStepping = true
        }
        switch action {
        case SQLITE_FUNCTION:
            // For SQLITE_FUNCTION the function's name is the second argument;
            // the last names the innermost trigger or view the reference is
            // in, and is NULL for the statement's own text.
            guard let second else { return SQLITE_OK }
            let name = AuthorizerPolicy.asciiLowercased(second)
            if refusesKeyChanges && name == "sqlcipher_export" {
                return refuse("sqlcipher_export(), which copies the database out of its encryption; use strongroom export")
            }
            guard let bit = directOnlyFunctions[name] else { return SQLITE_OK }
            if let innermost {
                let object = String(cString: innermost)
                state.refusal = (.untrustedSchema, "The trigger or view \"\(object)\" in the database's schema calls \(name)(), which only the application's own statements may call: it is SQL the application did not write. Nothing was run; remove \"\(object)\" (DROP TRIGGER or DROP VIEW) and find out who added it.")
                return SQLITE_DENY
            }
            state.referencedDirectOnlyFunctions |= bit
            return SQLITE_OK
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE:
            // The table is the first argument; the innermost trigger (or
            // view, for an INSTEAD OF trigger) the last, NULL for the
            // statement's own text.
            guard let innermost, let first, !tablesTriggersMayNotWrite.isEmpty,
                  tablesTriggersMayNotWrite.contains(String(cString: first).sqliteFolded) else { return SQLITE_OK }
            let object = String(cString: innermost), table = String(cString: first)
            state.refusal = (.untrustedSchema, "The trigger \"\(object)\" in the database's schema writes \(table), which Strongroom keeps signed: it is SQL the application did not write, and what it wrote would have been signed as the application's. Nothing was run; remove \"\(object)\" (DROP TRIGGER) and find out who added it.")
            return SQLITE_DENY
        case SQLITE_ATTACH:
            return refusesKeyChanges ? refuse("ATTACH, which could open another file without encryption or with a key in the SQL") : SQLITE_OK
        case SQLITE_PRAGMA:
            guard refusesKeyChanges, let first else { return SQLITE_OK }
            let name = AuthorizerPolicy.asciiLowercased(first)
            guard Self.refusedPragmaPrefixes.contains(where: { name.hasPrefix($0) }) || Self.refusedPragmas.contains(name) else { return SQLITE_OK }
            return refuse("PRAGMA \(name), which sets a key or a cipher setting, or would write plaintext; use strongroom rekey, import or export")
        default:
            return SQLITE_OK
        }
    }

    /// Denies what SQL someone typed may not do, saying what and why.
    private func refuse(_ what: String) -> Int32 {
        state.refusal = (.permissionDenied, "This connection does not run \(what).")
        return SQLITE_DENY
    }

    /// Pragmas that set or change a key or a cipher setting (SQLCipher
    /// runs them while preparing), or that would write plaintext.
    static let refusedPragmas: Set<String> = ["key", "hexkey", "textkey", "temp_store", "writable_schema"]
    static let refusedPragmaPrefixes = ["rekey", "hexrekey", "cipher", "kdf_", "fast_kdf", "sqlcipher"]

    /// True when `text` holds `name` as a whole word (not inside a longer
    /// name: `strongroom_seal` is not in `strongroom_sealed_columns`). Any
    /// quoting of the name around it counts as a mention.
    static func mentions(_ text: [UInt8], _ name: [UInt8]) -> Bool {
        func isNameByte(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x24 || byte >= 0x80
        }
        guard !name.isEmpty, text.count >= name.count else { return false }
        for start in 0...(text.count - name.count) where text[start] == name[0] && text[start..<(start + name.count)].elementsEqual(name) {
            let end = start + name.count
            if (start == 0 || !isNameByte(text[start - 1])) && (end == text.count || !isNameByte(text[end])) { return true }
        }
        return false
    }

    static func asciiLowercased(_ name: UnsafePointer<CChar>) -> String {
        asciiLowercased(String(cString: name))
    }

    /// SQLite's folding of function names: ASCII letters only.
    static func asciiLowercased(_ name: String) -> String {
        String(decoding: asciiLowercased(bytes: name.utf8), as: UTF8.self)
    }

    /// ``asciiLowercased(_:)`` of UTF-8 bytes, as bytes (for ``mentions(_:_:)``).
    static func asciiLowercased(bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
    }
}

extension Connection {
    /// The policy, installed as the authorizer on first use.
    var authorizer: AuthorizerPolicy {
        if let authorizerPolicy { return authorizerPolicy }
        let policy = AuthorizerPolicy(state: state)
        authorizerPolicy = policy
        // The policy lives as long as the connection, which owns it.
        sqlite3_set_authorizer(handle, { context, action, first, second, database, innermost in
            guard let context else { return SQLITE_OK }
            return Unmanaged<AuthorizerPolicy>.fromOpaque(context).takeUnretainedValue().authorize(action, first, second, database, innermost)
        }, Unmanaged.passUnretained(policy).toOpaque())
        clearStatementCaches()
        return policy
    }

    /// Refuses, at prepare time, any statement through which a trigger of
    /// the schema would insert into, update or delete from one of `tables`
    /// (`StrongroomError.Code.untrustedSchema`, naming the trigger): for a
    /// layer above that signs what those tables hold after its own writes,
    /// so that a trigger someone planted cannot add to what it signs. Kept
    /// for the connection's life; statements cached before are prepared
    /// again.
    package func refuseWritesFromTriggers(to tables: [String]) {
        let folded = Set(tables.map(\.sqliteFolded))
        guard !folded.isSubset(of: authorizer.tablesTriggersMayNotWrite) else { return }
        authorizer.tablesTriggersMayNotWrite.formUnion(folded)
        clearStatementCaches()
    }

    /// For a connection that runs SQL someone typed (`strongroom sql`):
    /// refuses, at prepare time, what would change the key or copy data out
    /// of the encryption: `ATTACH` (another file, perhaps unkeyed, with a key
    /// in the SQL text), `sqlcipher_export`, and the pragmas `key`, `hexkey`,
    /// `textkey`, `rekey*`, `hexrekey`, `cipher_*`, `kdf_iter`,
    /// `fast_kdf_iter`, `sqlcipher_*` (SQLCipher runs them while preparing),
    /// `temp_store` (temporary files would be plaintext) and `writable_schema`.
    package func refuseKeyChangesAndPlaintextCopies() {
        authorizer.refusesKeyChanges = true
    }

    /// The query that reads, from `schema`'s own `sqlite_master`, every row
    /// that has SQL, the `sql` column as text whatever its type (a BLOB is
    /// read as text in the database's encoding, as SQLite's schema loader
    /// reads it). Kept per schema, prepared once.
    ///
    /// Every row is read and tested in Swift, where a text found clean once
    /// is skipped by a hash lookup: a filter in SQL (a `GLOB` with a `[xX]`
    /// class per letter for each function's name and `temp`) cost about a
    /// millisecond a statement on Chinook's 30 rows, on every write that
    /// calls a direct-only function (issue 51).
    private func schemaScan(of schema: String) throws(StrongroomError) -> Statement {
        if let scan = schemaScanStatements[schema] { return scan }
        let scan = try prepare(sql: "SELECT type, name, CAST(sql AS TEXT) FROM \(SQLScript.quotedIdentifier(schema)).sqlite_master WHERE sql IS NOT NULL")
        schemaScanStatements[schema] = scan
        return scan
    }

    /// The bit of the direct-only function `name`, given one on first use.
    func directOnlyBit(forFunction name: String) throws(StrongroomError) -> UInt64 {
        let folded = AuthorizerPolicy.asciiLowercased(name)
        let policy = authorizer
        if let bit = policy.directOnlyFunctions[folded] { return bit }
        guard policy.directOnlyFunctions.count < 64 else {
            throw StrongroomError(.misuse, "A connection takes at most 64 direct-only function names; \(name) is one too many.", path: path)
        }
        let bit = UInt64(1) << UInt64(policy.directOnlyFunctions.count)
        policy.directOnlyFunctions[folded] = bit
        // Statements prepared before did not record it, nor did the scan.
        clearStatementCaches()
        schemaTextsWithoutDirectOnlyCalls.removeAll()
        return bit
    }

    /// Before a statement that writes and calls direct-only functions runs:
    /// refuses when an object of the schema (a table's CHECK or DEFAULT, an
    /// index, a trigger, a view) of the main or an attached database
    /// mentions one of them, or when such a schema holds a `CREATE TEMP`
    /// object (only `writable_schema` puts one there; SQLite would load it
    /// into the temp schema, where it could shadow even `sqlite_master`).
    /// SQLite compiles CHECK constraints, DEFAULTs and index expressions
    /// without asking the authorizer, so while the statement runs they could
    /// call a function it calls itself. Read each time from each schema's own
    /// `sqlite_master` (an edit made with `writable_schema` changes no schema
    /// version, and a connection reloads its schema after its own rollback).
    /// A statement that only reads runs none of them.
    func refuseSchemaCallingDirectOnlyFunctions() throws(StrongroomError) {
        guard let policy = authorizerPolicy, !policy.directOnlyFunctions.isEmpty else { return }
        let names = policy.directOnlyFunctions.keys.sorted()
        for schema in try fetchAll(sql: "PRAGMA database_list").map({ row throws(StrongroomError) in try row.decode(String.self, column: "name") })
        where schema.lowercased() != "temp" {
            let master = "\(SQLScript.quotedIdentifier(schema)).sqlite_master"
            for row in try schemaScan(of: schema).fetchAll() {
                let sql = SQLScript.schemaText(row[2])
                // A text found clean once is clean (the registry's own table, say).
                if schemaTextsWithoutDirectOnlyCalls.contains(ExactText(sql)) { continue }
                let type = try row.decode(String.self, at: 0), name = try row.decode(String.self, at: 1)
                let statement = AuthorizerPolicy.asciiLowercased(SQLScript.normalized(sql))
                if statement.hasPrefix("create temp ") || statement.hasPrefix("create temporary ") {
                    throw StrongroomError(.untrustedSchema, "The schema of \(schema) holds a temporary \(type) \"\(name)\", which only PRAGMA writable_schema puts there (SQLite would load it over the real schema, even over sqlite_master): it is SQL the application did not write. Nothing was run; remove it (DELETE FROM \(master) WHERE name = \(SQLScript.quotedLiteral(name)), with writable_schema) and find out who added it.", path: path)
                }
                let lowered = Array(AuthorizerPolicy.asciiLowercased(sql).utf8)
                guard let function = names.first(where: { AuthorizerPolicy.mentions(lowered, Array($0.utf8)) }) else {
                    schemaTextsWithoutDirectOnlyCalls.insert(ExactText(sql))
                    continue
                }
                throw StrongroomError(.untrustedSchema, "The \(type) \"\(name)\" in the schema of \(schema) calls \(function)(), which only the application's own statements may call: it is SQL the application did not write (in a \(type == "table" ? "CHECK constraint or DEFAULT" : type)). Nothing was run; remove it and find out who added it.", path: path)
            }
        }
    }
}
