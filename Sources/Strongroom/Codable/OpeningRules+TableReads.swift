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
        let p4: String
        /// True for a cursor opened on an index B-tree (P4 is its key
        /// description, "k(2,,)"; a table's is its column count).
        var opensIndex: Bool { p4.hasPrefix("k(") }
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
                instructions.append(Instruction(opcode: String(cString: opcode), p1: sqlite3_column_int64(handle, 2), p2: sqlite3_column_int64(handle, 3),
                                                p3: sqlite3_column_int64(handle, 4), p4: sqlite3_column_text(handle, 5).map { String(cString: $0) } ?? ""))
            }
            return instructions
        }
        return (reads, instructions)
    }

    /// Refuses a statement that reads an object under the name of a table
    /// the transform seals columns of, when that object is not a table: a
    /// view (of `main` or another schema) or any TEMP object (SQLite
    /// resolves a bare name in TEMP first). Under a declared view's name, a
    /// view of `main` (`check` then compares it with its declaration), never
    /// a table (its columns' origins would be its own, which seal nothing).
    /// `reads` are what the statement reads, as compiled on this connection:
    /// the names SQLite loaded, whatever the schema rows say.
    static func refuseStandIns(_ statement: Statement, reads: [ReadAccess], tables: [String], views: Set<ExactText>) throws(StrongroomError) {
        let connection = statement.connection
        let sealed = Set(tables.map { ExactText(AuthorizerPolicy.asciiLowercased($0)) })
        var checked: Set<[String]> = []
        for read in reads where !read.writes {
            let name = ExactText(AuthorizerPolicy.asciiLowercased(read.table))
            let isTableName = sealed.contains(name), isViewName = views.contains(name)
            guard isTableName || isViewName else { continue }
            let schema = AuthorizerPolicy.asciiLowercased(read.schema)
            guard checked.insert([schema, name.text]).inserted else { continue }
            let isTemp = schema == "temp"
            let isTable = !isTemp && connection.hasTable(read.table, in: read.schema)
            if isTableName && isTable { continue }
            if isViewName && !isTableName && !isTable && schema == "main" { continue }
            let what = isTemp ? "a TEMP object of this connection" : "\(isTable ? "a table" : "a view")\(schema == "main" ? "" : " of the attached database \(read.schema)")"
            let expected = isTableName ? "a table with sealed columns" : "a view the application declared"
            throw StrongroomError(.untrustedSchema, "The query reads \"\(read.table)\", the name of \(expected), and \(what) stands under that name. Whoever holds the database key can put one there to hand out text of theirs, under whatever name a query selects it, where the application expects opened values. Nothing was read; find out who changed \"\(read.table)\" (strongroom verify compares the schema with the migrations).",
                                  path: connection.path, sql: statement.sql)
        }
    }

    /// Refuses a statement that opens a sealed column of a table and reads
    /// that table more than once. Counted in the compiled `program`, on the
    /// B-trees this connection loaded:
    ///
    /// - each cursor opened on the table's own B-tree;
    /// - each cursor on one of its indexes that does not position a cursor
    ///   of the table on its row (a covering index read stands for the
    ///   table): positioning is `Seek`/`DeferredSeek` for a rowid table, and
    ///   for a `WITHOUT ROWID` table a `NotFound` on the primary key columns
    ///   read from the index just before;
    /// - each second cursor on a temporary table (`OpenDup`: SQLite 3.46
    ///   fills a common table expression read twice once), when the
    ///   statement reads the table at all.
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
        let duplicates = program.filter { $0.opcode == "OpenDup" }.count
        var done: Set<String> = []
        for column in columns where done.insert(AuthorizerPolicy.asciiLowercased(column.table)).inserted {
            let table = SQLScript.quotedIdentifier(column.table)
            // REINDEX reads the table and writes each of its indexes: their
            // B-trees as loaded (a table without an index: its only one). It
            // compiles each index's expressions and collations; without one
            // of those on this connection, every cursor on an index that is
            // not the table's counts as a read of it.
            var reindex: [Instruction]?
            do { reindex = try self.program(of: "REINDEX main.\(table)", in: connection) } catch { reindex = nil }
            var tableOpens: [Instruction] = reindex?.filter { $0.opcode == "OpenRead" && $0.p3 == 0 } ?? []
            if tableOpens.isEmpty {
                tableOpens = try self.program(of: "SELECT 1 FROM main.\(table) NOT INDEXED", in: connection).filter { $0.opcode == "OpenRead" && $0.p3 == 0 }
            }
            guard !tableOpens.isEmpty else {
                throw StrongroomError(.untrustedSchema, "The query opens \(column.table).\(column.column), which is sealed, and \"\(column.table)\" is no table of B-trees (a virtual table stands under its name): how often the query reads its rows cannot be counted, and whoever holds the database key can put one there. Nothing was opened; find out who changed \"\(column.table)\" (strongroom verify compares the schema with the migrations).",
                                      path: connection.path, sql: statement.sql)
            }
            let tableRoots = Set(tableOpens.map(\.p2))
            let indexRoots = reindex.map { Set($0.filter { $0.opcode == "OpenWrite" && $0.p3 == 0 }.map(\.p2)).subtracting(tableRoots) }
            let tableCursors = Set(cursors.filter { tableRoots.contains($0.value.root) }.keys)
            var unpositioned = cursors.filter {
                $0.value.index && !tableRoots.contains($0.value.root) && !positioned.contains($0.key) && (indexRoots?.contains($0.value.root) ?? true)
            }
            // A WITHOUT ROWID table is a B-tree of index records.
            if indexRoots != nil, tableOpens.contains(where: \.opensIndex), !unpositioned.isEmpty {
                unpositioned = try withoutPrimaryKeyLookups(unpositioned, of: column.table, tableCursors: tableCursors, program: program, in: connection)
            }
            var reads = tableCursors.count + unpositioned.count
            if reads > 0 { reads += duplicates }
            guard reads > 1 else { continue }
            let key = column.opened.contextNames.map { "\(column.table).\($0)" }.joined(separator: ", ")
            throw StrongroomError(.misuse, "The query opens \(column.table).\(column.column), which is sealed, and reads \(column.table) more than once (\(reads) times: a join of \(column.table) with itself, a subquery on it, or a common table expression or window read twice). A value opens with the row key its row holds\(key.isEmpty ? "" : " (\(key))"), which may come from the other read of \(column.table): another row's. Nothing was opened. Open \(column.table)'s sealed columns in a query that reads \(column.table) once (select the keys you need first, then read their rows).",
                                  path: connection.path, sql: statement.sql)
        }
    }

    /// `cursors` (on indexes of the `WITHOUT ROWID` table `table`) less
    /// those that position one of `tableCursors` by the primary key read
    /// from them: each key column read from the index (`Column`) into the
    /// registers of the `NotFound` that follows at once, as SQLite codes a
    /// lookup through an index.
    private static func withoutPrimaryKeyLookups(_ cursors: [Int64: (root: Int64, index: Bool)], of table: String, tableCursors: Set<Int64>, program: [Instruction],
                                                 in connection: Connection) throws(StrongroomError) -> [Int64: (root: Int64, index: Bool)] {
        let quoted = SQLScript.quotedIdentifier(table)
        // The primary key's column numbers, in key order.
        let primaryKey = try rows(of: "PRAGMA main.table_info(\(quoted))", in: connection).filter { $0[5] > 0 }.sorted { $0[5] < $1[5] }.map { $0[0] }
        // Each index's root, and where each table column sits in its records.
        var positions: [Int64: [Int64: Int64]] = [:]
        for name in try strings(of: "PRAGMA main.index_list(\(quoted))", column: 1, in: connection) {
            let index = SQLScript.quotedIdentifier(name)
            guard let root = try? compiled("REINDEX main.\(index)", program: true, in: connection).program.first(where: { $0.opcode == "OpenWrite" && $0.p3 == 0 })?.p2 else { continue }
            var columns: [Int64: Int64] = [:]
            for row in try rows(of: "PRAGMA main.index_xinfo(\(index))", in: connection) where columns[row[1]] == nil { columns[row[1]] = row[0] }
            positions[root] = columns
        }
        var positioned: Set<Int64> = []
        for (at, seek) in program.enumerated() where seek.opcode == "NotFound" && tableCursors.contains(seek.p1) {
            let count = primaryKey.count
            guard Int64(seek.p4) == Int64(count), at >= count else { continue }
            let reads = program[(at - count)..<at]
            guard let cursor = reads.first?.p1, let root = cursors[cursor]?.root, let columns = positions[root] else { continue }
            let isLookup = reads.enumerated().allSatisfy { j, read in
                read.opcode == "Column" && read.p1 == cursor && read.p3 == seek.p3 + Int64(j) && columns[primaryKey[j]] == read.p2
            }
            if isLookup { positioned.insert(cursor) }
        }
        return cursors.filter { !positioned.contains($0.key) }
    }

    /// `sql`'s program, as `EXPLAIN` lists it, compiled here and never run.
    private static func program(of sql: String, in connection: Connection) throws(StrongroomError) -> [Instruction] {
        try compiled(sql, program: true, in: connection).program
    }

    /// The integer columns of the rows of `sql` (a pragma), compiled here.
    private static func rows(of sql: String, in connection: Connection) throws(StrongroomError) -> [[Int64]] {
        try connection.inspect(sql: sql) { handle throws(StrongroomError) in
            var rows: [[Int64]] = []
            while sqlite3_step(handle) == SQLITE_ROW {
                rows.append((0..<sqlite3_column_count(handle)).map { sqlite3_column_int64(handle, $0) })
            }
            return rows
        }.value
    }

    /// One text column of the rows of `sql` (a pragma), compiled here.
    private static func strings(of sql: String, column: Int32, in connection: Connection) throws(StrongroomError) -> [String] {
        try connection.inspect(sql: sql) { handle throws(StrongroomError) in
            var values: [String] = []
            while sqlite3_step(handle) == SQLITE_ROW {
                if let text = sqlite3_column_text(handle, column) { values.append(String(cString: text)) }
            }
            return values
        }.value
    }
}
