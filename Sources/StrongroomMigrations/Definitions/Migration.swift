public import Strongroom
import StrongroomCrypto

/// One step of a schema's evolution: a numbered SQL file or a Swift closure.
///
/// SQL files are named `NNNN_description.sql`; the leading integer is the
/// version. A file may hold many statements (split as SQLite's tokenizer does:
/// strings, comments and trigger bodies are respected) and these directives,
/// each on a comment line of its own:
///
/// - `-- strongroom: no-transaction` — the file runs outside a transaction
///   (for `VACUUM`); its history row is written in a transaction of its own
///   after the last statement.
/// - `-- strongroom: rebuild` — placed just before a `CREATE TABLE name (...)`
///   statement, rebuilds the existing table `name` to that definition with
///   SQLite's 12-step procedure, copying the columns both definitions share.
///
/// `ALTER TABLE t DROP COLUMN c` and `ALTER TABLE t RENAME COLUMN a TO b` are
/// performed as rebuilds when the linked SQLite lacks them (before 3.35 / 3.25).
public struct Migration: Sendable {
    /// What a migration runs.
    public enum Body: Sendable {
        /// Statements from a SQL file.
        case sql(statements: [String], transactional: Bool)
        /// A Swift closure run in the migration's transaction.
        case swift(disablesForeignKeys: Bool, run: @Sendable (Connection) throws -> Void)
    }

    /// The version: migrations run in increasing order.
    public let version: Int
    /// The description: from the file name, or given in code.
    public let description: String
    /// The file the migration came from, if any.
    public let file: String?
    /// What runs.
    public let body: Body
    /// SHA-256 (hex) of what runs, ignoring line endings, trailing whitespace
    /// and comments. For a Swift migration, of its version and description.
    public let checksum: String

    /// A migration from SQL text (as read from a file).
    public init(version: Int, description: String, sql: String, file: String? = nil) {
        let statements = SQLScript.statements(in: sql)
        let transactional = !Migration.hasDirective("no-transaction", in: sql)
        self.version = version
        self.description = description
        self.file = file
        self.body = .sql(statements: statements, transactional: transactional)
        self.checksum = Migration.checksum(statements: statements, transactional: transactional)
    }

    /// A migration written in Swift.
    ///
    /// Set `disablesForeignKeys` when it rebuilds tables (see ``TableRebuild``):
    /// foreign keys are then switched off outside its transaction and checked
    /// with `PRAGMA foreign_key_check` before it commits.
    public init(version: Int, description: String, disablesForeignKeys: Bool = false, _ run: @escaping @Sendable (Connection) throws -> Void) {
        self.version = version
        self.description = description
        self.file = nil
        self.body = .swift(disablesForeignKeys: disablesForeignKeys, run: run)
        self.checksum = Hex.encode(SHA256.hash(Array("swift:\(version):\(description)".utf8)))
    }

    /// The checksum of statements: each is normalized (comments removed,
    /// whitespace folded), directives are kept, so only a change to what runs
    /// changes it.
    static func checksum(statements: [String], transactional: Bool) -> String {
        var hash = SHA256()
        hash.update(Array((transactional ? "tx\n" : "no-tx\n").utf8))
        for statement in statements {
            if isRebuild(statement) { hash.update(Array("rebuild:".utf8)) }
            hash.update(Array(SQLScript.normalized(statement).utf8))
            hash.update([0])
        }
        return Hex.encode(hash.finalize())
    }

    static func hasDirective(_ name: String, in text: String) -> Bool {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).contains { line in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return words.count == 3 && words[0] == "--" && words[1] == "strongroom:" && words[2] == name
        }
    }

    /// True when `statement` carries the rebuild directive.
    static func isRebuild(_ statement: String) -> Bool {
        hasDirective("rebuild", in: statement)
    }

    /// True when running this migration rebuilds tables, so foreign keys must
    /// be off outside its transaction.
    func needsForeignKeysOff(sqliteVersion: SQLiteVersion) -> Bool {
        switch body {
        case .swift(let disables, _):
            return disables
        case .sql(let statements, _):
            return statements.contains { Migration.isRebuild($0) || AlterTableRewrite.parse($0, sqliteVersion: sqliteVersion) != nil }
        }
    }
}
