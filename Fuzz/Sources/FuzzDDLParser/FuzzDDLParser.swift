/// Fuzzes the DDL parser behind table rebuilds and `strongroom diff`: the
/// input is one SQL statement (`CREATE TABLE`, `CREATE VIEW`, `CREATE
/// TRIGGER`, `CREATE INDEX`, `ALTER TABLE`, or anything else), given to
/// `SQLTokenizer`, `CreateTableDefinition`, `AlterTableRewrite`,
/// `ColumnReferenceFinder` (over a fixed schema), `DatabaseSchema` and
/// `SchemaDiff`, and `TableDefinition.defaultClause`.
///
/// Checks: tokens are in order, do not overlap and spell the text they
/// cover; a parsed `CREATE TABLE` has items in order within its
/// parentheses, and the statement it writes for another name
/// (`sql(named:)`, what a rebuild creates) parses to the same items. Where
/// SQLite itself (SQLCipher's, in memory) accepts the statement, the parser
/// agrees with it: the table's name and its column names, byte for byte, are
/// what `PRAGMA table_info` reports, and the rewritten statement gives a
/// table with the same columns; the schema diff reads the table into a
/// schema file (`DatabaseSchema.sql`) that runs and reads back as the same
/// schema, and finds no step from it to itself. Column references found
/// are tokens naming the column. `ALTER TABLE … DROP/RENAME COLUMN` parses
/// only from such a statement, and only for an SQLite that lacks the form.
import Foundation
import FuzzSupport
@testable import Strongroom
@testable import StrongroomMigrations

/// SQLite, to compare with: in memory, empty between inputs.
nonisolated(unsafe) let db = try! Connection.inMemory()

/// A schema for the column reference finder: it looks for person.name.
let schema = """
    CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER CHECK (age >= 0));
    CREATE TABLE pet(id INTEGER PRIMARY KEY, owner INTEGER REFERENCES person(id), name TEXT);
    CREATE INDEX person_name ON person(name);
    CREATE VIEW adult AS SELECT id, name AS who FROM person WHERE age >= 18;
    CREATE TRIGGER person_ai AFTER INSERT ON person BEGIN INSERT INTO pet(owner, name) VALUES (NEW.id, NEW.name); END;
    """
nonisolated(unsafe) let catalog: SchemaCatalog = {
    let schemaDB = try! Connection.inMemory()
    try! schemaDB.execute(sql: schema)
    return try! SchemaCatalog(schemaDB)
}()
let finder = ColumnReferenceFinder(table: "person", column: "name", catalog: catalog)

@main
struct Main {
    static func main() { FuzzMain.run(fuzz, seeds: seeds) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let sql = String(decoding: UnsafeBufferPointer(start: data, count: data == nil ? 0 : size), as: UTF8.self)
    let tokens = checkTokens(sql)
    if let definition = checkCreateTable(sql) {
        compareWithSQLite(sql, definition)
    }
    checkAlterTable(sql, tokens)
    checkReferences(sql, tokens)
    _ = TableDefinition.defaultClause(sql)
    return 0
}

// MARK: Tokens

func checkTokens(_ sql: String) -> [SQLToken] {
    let tokens = SQLTokenizer.tokenize(sql)
    let scalars = Array(sql.unicodeScalars)
    var end = 0
    for token in tokens {
        invariant(token.range.lowerBound >= end && token.range.upperBound <= scalars.count && !token.range.isEmpty,
                  "token \(token.text.debugDescription) at \(token.range) overlaps the previous one or leaves the text (\(scalars.count) scalars)")
        invariant(token.text.unicodeScalars.elementsEqual(scalars[token.range]), "token \(token.text.debugDescription) is not the text at \(token.range)")
        end = token.range.upperBound
    }
    return tokens
}

// MARK: CREATE TABLE

func checkCreateTable(_ sql: String) -> CreateTableDefinition? {
    guard let definition = CreateTableDefinition(sql) else { return nil }
    let count = sql.unicodeScalars.count
    var end = 0
    for item in definition.items {
        invariant(item.range.lowerBound >= end && item.range.upperBound <= count, "item \(item.text.debugDescription) at \(item.range) is out of order")
        end = item.range.upperBound
    }
    _ = definition.qualifiesColumnsWithItsName
    _ = definition.isWithoutRowid
    _ = definition.usesAutoincrement
    // What a rebuild creates parses to the same items.
    let rewritten = definition.sql(named: "strongroom_new_" + definition.table)
    guard let again = CreateTableDefinition(rewritten) else {
        fail("the rewritten statement does not parse: \(rewritten.debugDescription)")
    }
    invariant(bytes(again.table) == bytes("strongroom_new_" + definition.table), "the rewritten statement names \(again.table.debugDescription)")
    invariant(again.items.map { bytes($0.text) } == definition.items.map { bytes($0.text) },
              "the rewritten statement has other items: \(again.items.map(\.text)) for \(definition.items.map(\.text))")
    invariant(again.columns.map(bytes) == definition.columns.map(bytes), "the rewritten statement has columns \(again.columns), not \(definition.columns)")
    invariant(bytes(again.suffix) == bytes(definition.suffix), "the rewritten statement ends \(again.suffix.debugDescription), not \(definition.suffix.debugDescription)")
    return definition
}

/// Where SQLite accepts the statement, the parser sees the table SQLite made.
func compareWithSQLite(_ sql: String, _ definition: CreateTableDefinition) {
    defer { clear() }
    // One statement only (prepare refuses more): nothing but a table in memory is made.
    guard let statement = try? db.prepare(sql: sql), (try? statement.execute()) != nil else { return }
    guard let made = try? db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND \(userObject) UNION ALL SELECT name FROM sqlite_temp_master WHERE type = 'table' AND \(userObject)"),
          made.count == 1, let name = try? made[0].decode(String.self, at: 0) else {
        return
    }
    invariant(bytes(definition.table) == bytes(name), "the parser reads the table name \(definition.table.debugDescription), SQLite made \(name.debugDescription)")
    let columns = columnNames(name)
    invariant(definition.columns.map(bytes) == columns.map(bytes),
              "the parser reads the columns \(definition.columns.map(\.debugDescription)), SQLite made \(columns.map(\.debugDescription)) from \(sql.debugDescription)")
    checkSchemaFile(sql)
    // The statement a rebuild runs makes a table with the same columns (a
    // rebuild refuses a table whose constraints name it).
    guard !definition.qualifiesColumnsWithItsName, name.sqliteFolded != "strongroom_new".sqliteFolded else { return }
    let rewritten = definition.sql(named: "strongroom_new")
    do {
        try db.prepare(sql: rewritten).execute()
    } catch {
        fail("SQLite accepts the statement but not its rewrite \(rewritten.debugDescription): \(error.message)")
    }
    invariant(columnNames("strongroom_new").map(bytes) == columns.map(bytes), "the rewritten table has columns \(columnNames("strongroom_new")), not \(columns)")
}

/// The schema diff's view of the table: its schema file (`DatabaseSchema.sql`)
/// runs and reads back as the same schema, and the diff from the schema to
/// itself has no step.
func checkSchemaFile(_ sql: String) {
    let schema: DatabaseSchema
    do {
        schema = try DatabaseSchema.read(from: db)
    } catch {
        fail("DatabaseSchema.read fails on a table SQLite made from \(sql.debugDescription): \(error.message)")
    }
    let file = schema.sql
    do {
        let again = try DatabaseSchema.read(sql: file)
        invariant(again == schema, "the schema file of \(sql.debugDescription) reads back as another schema: \(again.tables), not \(schema.tables); the file is \(file.debugDescription)")
    } catch {
        fail("the schema file of \(sql.debugDescription) does not run: \(error.message); the file is \(file.debugDescription)")
    }
    let diff = SchemaDiff.plan(from: schema, to: schema)
    invariant(diff.steps.isEmpty && diff.refusals.isEmpty, "the diff from a schema to itself is \(diff.sql)")
}

func columnNames(_ table: String) -> [String] {
    ((try? db.fetchAll(sql: "PRAGMA table_info(\(SQLScript.quotedIdentifier(table)))")) ?? []).compactMap { try? $0.decode(String.self, column: "name") }
}

/// Names SQLite does not reserve (`sqlite_sequence`, automatic indexes).
let userObject = "lower(substr(name, 1, 7)) <> 'sqlite_'"

/// Drops whatever the input made.
func clear() {
    for schemaTable in ["sqlite_master", "sqlite_temp_master"] {
        let names = ((try? db.fetchAll(sql: "SELECT type, name FROM \(schemaTable) WHERE type IN ('table', 'view', 'trigger') AND \(userObject)")) ?? [])
        for row in names {
            guard let type = try? row.decode(String.self, at: 0), let name = try? row.decode(String.self, at: 1) else { continue }
            try? db.execute(sql: "DROP \(type.uppercased()) IF EXISTS \(SQLScript.quotedIdentifier(name))")
        }
    }
    let left = (try? db.fetchOne(Int.self, sql: "SELECT (SELECT count(*) FROM sqlite_master WHERE \(userObject)) + (SELECT count(*) FROM sqlite_temp_master WHERE \(userObject))")) ?? -1
    invariant(left == 0, "the schema could not be cleared between inputs")
}

// MARK: ALTER TABLE

let sqlite315 = SQLiteVersion(3, 15, 2), sqlite340 = SQLiteVersion(3, 40, 0)

func checkAlterTable(_ sql: String, _ tokens: [SQLToken]) {
    guard tokens.first?.isKeyword("ALTER") == true else { return }
    let old = AlterTableRewrite.parse(sql, sqliteVersion: sqlite315)
    let new = AlterTableRewrite.parse(sql, sqliteVersion: sqlite340)
    invariant(new == nil, "ALTER TABLE is rewritten for an SQLite that has DROP and RENAME COLUMN")
    guard let old else { return }
    let words = tokens.filter { $0.text != ";" }
    invariant(words.count >= 5 && words[0].isKeyword("ALTER") && words[1].isKeyword("TABLE"), "\(old) parsed from a statement that is not an ALTER TABLE")
    switch old {
    case .dropColumn(let table, let column):
        invariant(words.contains { $0.isKeyword("DROP") }, "DROP COLUMN \(table).\(column) parsed without DROP")
    case .renameColumn(let table, let from, let to):
        invariant(words.contains { $0.isKeyword("RENAME") } && words.contains { $0.isKeyword("TO") },
                  "RENAME COLUMN \(table).\(from) to \(to) parsed without RENAME … TO")
    }
}

// MARK: Column references

func checkReferences(_ sql: String, _ tokens: [SQLToken]) {
    let words = tokens.filter { $0.kind == .word }.prefix(8).map { $0.text.uppercased() }
    guard words.first == "CREATE" else { return }
    let kind: SchemaCatalog.Object.Kind
    var tableName = "person"
    if words.contains("TRIGGER") {
        kind = .trigger
    } else if words.contains("INDEX") {
        kind = .index
    } else if words.contains("VIEW") {
        kind = .view
    } else {
        kind = .table
    }
    // An index or trigger belongs to the table after ON, when it names one.
    if kind == .index || kind == .trigger, let on = tokens.firstIndex(where: { $0.isKeyword("ON") }), on + 1 < tokens.count,
       let name = tokens[on + 1].name {
        tableName = name
    }
    let object = SchemaCatalog.Object(kind: kind, name: "fuzzed", tableName: kind == .table || kind == .view ? "fuzzed" : tableName, sql: sql)
    let ranges: [Range<Int>]
    do {
        ranges = try finder.references(in: object)
    } catch {
        return
    }
    var end = 0
    for range in ranges {
        guard let token = tokens.first(where: { $0.range == range }) else {
            fail("a reference at \(range) is not a token of \(sql.debugDescription)")
        }
        invariant(range.lowerBound >= end, "references are not in order")
        invariant(token.name?.sqliteFolded == "name".sqliteFolded, "a reference to person.name is the token \(token.text.debugDescription)")
        end = range.upperBound
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

// MARK: Seeds

/// The CREATE and ALTER statements of the repository's migrations, of the
/// ALTER TABLE corpus and of the reference schema, one per file (read from
/// the working directory, the repository's root).
func seeds() throws -> [(name: String, bytes: [UInt8])] {
    var texts: [(String, String)] = [("schema", schema)]
    for file in try FileManager.default.contentsOfDirectory(atPath: "Migrations").sorted() where file.hasSuffix(".sql") {
        texts.append(("repo-" + file, try String(contentsOfFile: "Migrations/" + file, encoding: .utf8)))
    }
    texts.append(("corpus", try String(contentsOfFile: "Tests/StrongroomMigrationsTests/Corpus/alter-column.sql", encoding: .utf8)))
    var seen = Set<String>()
    var out: [(name: String, bytes: [UInt8])] = []
    for (source, text) in texts {
        for statement in SQLScript.statements(in: text) {
            let tokens = SQLTokenizer.tokenize(statement)
            guard let first = tokens.first, first.isKeyword("CREATE") || first.isKeyword("ALTER") else { continue }
            let trimmed = String(String.UnicodeScalarView(statement.unicodeScalars.dropFirst(first.range.lowerBound)))
            guard seen.insert(trimmed).inserted else { continue }
            out.append(("\(source)-\(out.count)", Array(trimmed.utf8)))
        }
    }
    return out
}
