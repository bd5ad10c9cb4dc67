/// Fuzzes migration files: a length-prefixed file name, then the file's SQL.
/// The name goes to `MigrationDirectory.parse(name:)`, the SQL to
/// `SQLScript.statements(in:)` and `Migration(version:description:sql:)`
/// (directives, checksum, the line of each statement).
///
/// Checks: a name parses only as `NNNN_description.sql` with a version above
/// 0, and its version is the number its digits spell; the statements are
/// pieces of the script, in order, none empty; every statement but the last
/// ends with a semicolon that SQLite's own `sqlite3_complete` takes as the
/// end of a statement, and none holds an earlier one; splitting the statements joined
/// again gives them back; the line given for each statement is the line of
/// the script where its first token stands; a comment line put before the
/// script changes neither statements' meaning nor the checksum.
import CSQLiteComplete
import Foundation
import FuzzSupport
@testable import Strongroom
@testable import StrongroomMigrations

@main
struct Main {
    static func main() { FuzzMain.run(fuzz, seeds: seeds) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let name = String(decoding: input.piece(maximum: 64), as: UTF8.self)
    let sql = String(decoding: input.rest(), as: UTF8.self)
    checkName(name)
    checkScript(sql)
    return 0
}

// MARK: File names

func checkName(_ name: String) {
    let parsed: (Int, String)
    do {
        parsed = try MigrationDirectory.parse(name: name + ".sql")
    } catch {
        invariant(error.code == .malformedName, "parse(name:) threw \(error.code)")
        return
    }
    let (version, description) = parsed
    let bytes = Array(name.utf8)
    let digits = bytes.prefix(while: { (0x30...0x39).contains($0) })
    invariant(version > 0 && !digits.isEmpty && digits.count < bytes.count && bytes[digits.count] == 0x5F,
              "parse(name:) accepted \(name).sql, which does not start with a number and an underscore")
    invariant(String(decoding: digits.drop(while: { $0 == 0x30 }), as: UTF8.self) == String(version),
              "\(name).sql parsed as version \(version)")
    invariant(!description.isEmpty, "\(name).sql parsed with an empty description")
}

// MARK: Scripts

func checkScript(_ sql: String) {
    // The migration splits with SQLScript.statements(in:).
    let migration = Migration(version: 1, description: "fuzz", sql: sql)
    guard case .sql(let statements, let transactional) = migration.body else { fail("a SQL migration has no SQL body") }
    let text = Array(sql.utf8)

    // Pieces of the script, in order.
    var from = 0
    for (i, statement) in statements.enumerated() {
        let piece = Array(statement.utf8)
        invariant(!piece.isEmpty, "statement \(i) is empty")
        guard let at = find(piece, in: text, from: from) else {
            fail("statement \(i) is not a piece of the script after statement \(i - 1): \(statement.debugDescription)")
        }
        from = at + piece.count
        let isLast = i == statements.count - 1
        if !isLast {
            invariant(piece.last == UInt8(ascii: ";"), "statement \(i) of \(statements.count) does not end with a semicolon")
        }
        // SQLite's view of where statements end: at the last semicolon of
        // every statement but the last, and at no semicolon before it (a
        // NUL ends the text for sqlite3_complete: then it sees less).
        if !piece.contains(0) {
            if !isLast {
                invariant(complete(piece[...]), "sqlite3_complete does not end statement \(i) of \(statements.count) where it was split: \(statement.debugDescription)")
            }
            for end in piece.indices.dropLast().filter({ piece[$0] == UInt8(ascii: ";") }).prefix(32) {
                invariant(!complete(piece[...end]), "sqlite3_complete ends statement \(i) at byte \(end), before where it was split: \(statement.debugDescription)")
            }
        }
    }

    // Split again, the same statements.
    let again = SQLScript.statements(in: statements.joined(separator: "\n"))
    invariant(again.map { Array($0.utf8) } == statements.map { Array($0.utf8) },
              "splitting the statements joined again gives \(again.count) statements, not \(statements.count)")

    // The line of each statement's first token.
    invariant(migration.statementLines == expectedLines(statements, in: text),
              "statement lines \(migration.statementLines), expected \(expectedLines(statements, in: text))")
    for statement in statements {
        _ = Migration.isTransactionControl(statement)
        _ = Migration.isRebuild(statement)
    }
    _ = migration.rebuildsTables(sqliteVersion: SQLiteVersion(3, 15, 2))

    // A comment line before the script changes nothing that runs (checked
    // on short scripts: it splits the whole script again).
    guard text.count <= 512 else { return }
    let commented = Migration(version: 1, description: "fuzz", sql: "-- a note from the fuzzer\n" + sql)
    invariant(commented.checksum == migration.checksum, "a comment line before the script changes the checksum (transactional: \(transactional))")
    invariant(commented.isTransactional == migration.isTransactional && commented.foreignKeyChecks == migration.foreignKeyChecks,
              "a comment line before the script changes its directives")
}

/// SQLite's test for a complete statement.
func complete(_ text: ArraySlice<UInt8>) -> Bool {
    (Array(text) + [0]).withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { sqlite3_complete($0.baseAddress) == 1 }
    }
}

/// The first offset of `piece` in `text` at or after `from`, compared byte by byte.
func find(_ piece: [UInt8], in text: [UInt8], from: Int) -> Int? {
    guard piece.count <= text.count - from else { return nil }
    var at = from
    while at + piece.count <= text.count {
        if text[at] == piece[0] && text[at..<(at + piece.count)].elementsEqual(piece) { return at }
        at += 1
    }
    return nil
}

/// The 1-based line of each statement's first token (its first byte when it
/// has none), found byte by byte.
func expectedLines(_ statements: [String], in text: [UInt8]) -> [Int] {
    var lines: [Int] = []
    var from = 0
    for statement in statements {
        let piece = Array(statement.utf8)
        guard let at = find(piece, in: text, from: from) else { return [] }
        // The first token's scalar offset, as a byte offset.
        let firstToken = SQLTokenizer.tokenize(statement).first?.range.lowerBound ?? 0
        let scalars = Array(statement.unicodeScalars.prefix(firstToken))
        let tokenAt = at + scalars.reduce(0) { $0 + String($1).utf8.count }
        lines.append(1 + text[..<tokenAt].reduce(0) { $1 == 0x0A ? $0 + 1 : $0 })
        from = at + piece.count
    }
    return lines
}

// MARK: Seeds

/// The repository's migrations and the setup and ALTER sections of the
/// ALTER TABLE corpus (read from the working directory, the repository's
/// root), each as name length, name, SQL.
func seeds() throws -> [(name: String, bytes: [UInt8])] {
    func seed(_ name: String, _ sql: String) -> [UInt8] {
        let stem = Array(name.utf8.prefix(64))
        return [UInt8(stem.count)] + stem + Array(sql.utf8)
    }
    var out: [(name: String, bytes: [UInt8])] = []
    let directory = "Migrations"
    for file in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() where file.hasSuffix(".sql") {
        let sql = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
        out.append(("repo-" + file, seed(String(file.dropLast(4)), sql)))
    }
    let corpus = try String(contentsOfFile: "Tests/StrongroomMigrationsTests/Corpus/alter-column.sql", encoding: .utf8)
    for (i, section) in corpus.components(separatedBy: "\n-- case: ").dropFirst().enumerated() {
        let name = String(section.prefix(while: { $0 != "\n" }))
        out.append(("corpus-\(i)-\(name)", seed("\(i + 1)_\(name)", section)))
    }
    out.append(("directives", seed("0007_vacuum", "-- strongroom: no-transaction\nVACUUM;\n")))
    out.append(("rebuild", seed("0008_rebuild", "-- strongroom: rebuild\nCREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL);\n")))
    out.append(("trigger", seed("0009_trigger", "CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN\n  UPDATE t SET b = 'END;' WHERE a = NEW.a;\nEND;\nSELECT 1")))
    return out
}
