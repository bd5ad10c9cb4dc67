internal import CSQLCipher

/// Two rules about the tables a statement reads, for a connection with a
/// ``ColumnTransform``: part of ``OpeningRules``.
///
/// - **Stand-ins** (``refuseStandIns(_:reads:)``): a name the transform
///   seals columns of is a table, or the statement reads nothing. Whoever
///   holds the database key can rename the table and put a view of its name
///   in its place (or, on SQLite 3.15, load one from a `writable_schema` row
///   of another name): nothing is opened there, so no rule about opening
///   applies, and the view's text of theirs leaves under whatever name the
///   query selects it.
/// - **One read of a sealed table** (``refuseSecondReads(_:opening:program:)``):
///   a value opens with the row key its row holds, and a query that reads
///   the table twice (a join with itself, a subquery on it) can hold one
///   read's value beside the other read's key: another row's.
extension OpeningRules {
    /// One instruction of a compiled program, as `EXPLAIN` lists it.
    struct Instruction {
        let opcode: String
        let p1: Int64
        let p2: Int64
        let p3: Int64
        /// Set for a cursor opened on an index (its key description).
        let opensIndex: Bool
    }

    /// True when `sql` mentions one of `names` (ASCII lower case) as a
    /// whole word, quoted or not: only such a statement can read a sealed
    /// table or a declared view by its name.
    static func mayRead(_ sql: String, anyOf names: [[UInt8]]) -> Bool {
        guard !names.isEmpty else { return false }
        let text = Array(AuthorizerPolicy.asciiLowercased(sql).utf8)
        return names.contains { AuthorizerPolicy.mentions(text, $0) }
    }

    /// Compiles the statement's SQL again, never to run it, against the
    /// schema this connection has loaded (what the statement runs): what it
    /// reads, as the authorizer sees it, and, with `program`, its
    /// instructions.
    static func compile(_ statement: Statement, program: Bool) throws(StrongroomError) -> (reads: [ReadAccess], program: [Instruction]) {
        try compiled(statement.sql, program: program, in: statement.connection)
    }

    private static func compiled(_ sql: String, program: Bool, in connection: Connection) throws(StrongroomError) -> (reads: [ReadAccess], program: [Instruction]) {
        guard program else {
            return (try connection.inspect(sql: sql) { _ throws(StrongroomError) in () }.reads, [])
        }
        let explain = "EXPLAIN " + sql
        let (instructions, reads) = try connection.inspect(sql: explain) { handle throws(StrongroomError) in
            var instructions: [Instruction] = []
            while true {
                let status = sqlite3_step(handle)
                if status == SQLITE_DONE { break }
                guard status == SQLITE_ROW else { throw connection.lastError(status, sql: explain) }
                guard let opcode = sqlite3_column_text(handle, 1) else { continue }
                // P4 of an index cursor's open is its key ("k(2,,)"); a
                // table's is its column count.
                let p4 = sqlite3_column_text(handle, 5).map { String(cString: $0) } ?? ""
                instructions.append(Instruction(opcode: String(cString: opcode), p1: sqlite3_column_int64(handle, 2), p2: sqlite3_column_int64(handle, 3),
                                                p3: sqlite3_column_int64(handle, 4), opensIndex: p4.hasPrefix("k(")))
            }
            return instructions
        }
        return (reads, instructions)
    }

    /// Refuses a statement that reads an object under the name of a table
    /// the transform seals columns of, when that object is not a table: a
    /// view (of `main` or another schema) or any TEMP object (SQLite
    /// resolves a bare name in TEMP first). `reads` are what the statement
    /// reads, as compiled on this connection; a view's name is read before
    /// its body is, so the name SQLite loaded is the one checked, whatever
    /// the schema row says.
    static func refuseStandIns(_ statement: Statement, reads: [ReadAccess], tables: [String]) throws(StrongroomError) {
        let connection = statement.connection
        let sealed = Set(tables.map(AuthorizerPolicy.asciiLowercased))
        var checked: Set<[String]> = []
        for read in reads where !read.writes && sealed.contains(AuthorizerPolicy.asciiLowercased(read.table)) {
            let schema = AuthorizerPolicy.asciiLowercased(read.schema)
            guard checked.insert([schema, AuthorizerPolicy.asciiLowercased(read.table)]).inserted else { continue }
            let isTemp = schema == "temp"
            if !isTemp && connection.hasTable(read.table, in: read.schema) { continue }
            let what = isTemp ? "a TEMP object of this connection" : (schema == "main" ? "a view" : "a view of the attached database \(read.schema)")
            throw StrongroomError(.untrustedSchema, "The query reads \"\(read.table)\", the name of a table with sealed columns, and \(what) stands under that name, not the table. Whoever holds the database key can put a view in the table's place to hand out text of theirs, under whatever name a query selects it, where the application expects opened values. Nothing was read; find out who changed \"\(read.table)\" (strongroom verify compares the schema with the migrations).",
                                  path: connection.path, sql: statement.sql)
        }
    }

    /// Refuses a statement that opens a sealed column of a table and reads
    /// that table more than once. Counted in the compiled `program`: each
    /// cursor opened on the table's own B-tree, and each cursor on one of
    /// its indexes that does not position a cursor of the table (a
    /// covering index read stands for the table), is one read. The B-trees
    /// are the ones this connection loaded, found by compiling scans of the
    /// table and of each index.
    static func refuseSecondReads(_ statement: Statement, opening columns: [OpeningPlan.Column], program: [Instruction]) throws(StrongroomError) {
        let connection = statement.connection
        // Cursors opened on main's B-trees: cursor → (root page, index?).
        var cursors: [Int64: (root: Int64, index: Bool)] = [:]
        var positioned: Set<Int64> = []
        for instruction in program {
            switch instruction.opcode {
            case "OpenRead", "OpenWrite", "ReopenIdx":
                if instruction.p3 == 0 { cursors[instruction.p1] = (instruction.p2, instruction.opensIndex) }
            case "Seek", "DeferredSeek":
                // An index cursor (P1) that moves a table cursor (P3) to its row.
                positioned.insert(instruction.p1)
            default:
                break
            }
        }
        var done: Set<String> = []
        for column in columns where done.insert(AuthorizerPolicy.asciiLowercased(column.table)).inserted {
            let tableRoots = try roots(of: "SELECT 1 FROM main.\(SQLScript.quotedIdentifier(column.table)) NOT INDEXED", in: connection)
            let tableCursors = cursors.filter { tableRoots.contains($0.value.root) }.count
            let unpositioned = cursors.filter { $0.value.index && !tableRoots.contains($0.value.root) && !positioned.contains($0.key) }
            var reads = tableCursors
            if !unpositioned.isEmpty {
                let indexRoots = try self.indexRoots(of: column.table, in: connection)
                reads += unpositioned.filter { indexRoots.contains($0.value.root) }.count
            }
            guard reads > 1 else { continue }
            let key = column.opened.contextNames.map { "\(column.table).\($0)" }.joined(separator: ", ")
            throw StrongroomError(.misuse, "The query opens \(column.table).\(column.column), which is sealed, and reads \(column.table) more than once (\(reads) times: a join of \(column.table) with itself, or a subquery on it). A value opens with the row key its row holds\(key.isEmpty ? "" : " (\(key))"), which may come from the other read of \(column.table): another row's. Nothing was opened. Open \(column.table)'s sealed columns in a query that reads \(column.table) once (select the keys you need first, then read their rows).",
                                  path: connection.path, sql: statement.sql)
        }
    }

    /// The root pages on which `sql`'s program opens cursors in main, as
    /// compiled here.
    private static func roots(of sql: String, in connection: Connection) throws(StrongroomError) -> Set<Int64> {
        var roots: Set<Int64> = []
        for instruction in try program(of: sql, in: connection) where instruction.p3 == 0 && (instruction.opcode == "OpenRead" || instruction.opcode == "ReopenIdx") {
            roots.insert(instruction.p2)
        }
        return roots
    }

    /// `sql`'s program, as `EXPLAIN` lists it, compiled here and never run.
    private static func program(of sql: String, in connection: Connection) throws(StrongroomError) -> [Instruction] {
        try compiled(sql, program: true, in: connection).program
    }

    /// The root pages of `table`'s indexes, as this connection loaded them:
    /// each index scanned (`INDEXED BY`); an index SQLite will not scan so
    /// (a partial one) is looked up in main's catalogue by its name.
    private static func indexRoots(of table: String, in connection: Connection) throws(StrongroomError) -> Set<Int64> {
        let list = "PRAGMA main.index_list(\(SQLScript.quotedIdentifier(table)))"
        let names = try connection.inspect(sql: list) { handle throws(StrongroomError) in
            var names: [String] = []
            while sqlite3_step(handle) == SQLITE_ROW {
                if let name = sqlite3_column_text(handle, 1) { names.append(String(cString: name)) }
            }
            return names
        }.value
        var roots: Set<Int64> = []
        for name in names {
            let scan = "SELECT 1 FROM main.\(SQLScript.quotedIdentifier(table)) INDEXED BY \(SQLScript.quotedIdentifier(name))"
            if let found = try? self.roots(of: scan, in: connection), !found.isEmpty {
                roots.formUnion(found)
                continue
            }
            let stored = try connection.inspect(sql: "SELECT rootpage FROM main.sqlite_master WHERE type = 'index' AND name = \(SQLScript.quotedLiteral(name))") { handle throws(StrongroomError) in
                var roots: [Int64] = []
                while sqlite3_step(handle) == SQLITE_ROW { roots.append(sqlite3_column_int64(handle, 0)) }
                return roots
            }.value
            roots.formUnion(stored)
        }
        return roots
    }
}
