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
/// - `-- strongroom: immediate-foreign-keys` — foreign keys stay on while the
///   migration runs (see ``ForeignKeyChecks/immediate``).
///
/// `ALTER TABLE t DROP COLUMN c` and `ALTER TABLE t RENAME COLUMN a TO b` are
/// performed as rebuilds when the linked SQLite lacks them (before 3.35 / 3.25).
///
/// A transactional migration may not contain `BEGIN`, `COMMIT`, `END` or
/// `ROLLBACK` (savepoints are fine): the runner owns its transaction, and
/// refuses such a file naming its line.
public struct Migration: Sendable {
    /// What a migration runs.
    public enum Body: Sendable {
        /// Statements from a SQL file.
        case sql(statements: [String], transactional: Bool)
        /// A Swift closure run in the migration's transaction.
        case swift(run: @Sendable (Connection) throws -> Void)
    }

    /// When a migration's foreign keys are checked.
    public enum ForeignKeyChecks: Sendable, Equatable {
        /// The default, as in GRDB: foreign keys are switched off *outside* the
        /// migration's transaction (inside one, `PRAGMA foreign_keys` does
        /// nothing), so dropping or rebuilding a parent table never deletes
        /// child rows through `ON DELETE CASCADE`, and a row may briefly point
        /// at a parent inserted later. `PRAGMA foreign_key_check` runs before
        /// the commit; any violating row fails the migration, naming the rows.
        case deferred
        /// Foreign keys stay as the connection has them: each statement is
        /// checked as it runs and cascades fire. Table rebuilds are refused.
        case immediate
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
    /// When foreign keys are checked; ``ForeignKeyChecks/deferred`` unless asked.
    public let foreignKeyChecks: ForeignKeyChecks
    /// For a SQL migration, the line of the file where each statement's first
    /// word stands (1-based), for error messages.
    let statementLines: [Int]

    /// A migration from SQL text (as read from a file).
    public init(version: Int, description: String, sql: String, file: String? = nil) {
        let statements = SQLScript.statements(in: sql)
        let transactional = !Migration.hasDirective("no-transaction", in: sql)
        self.version = version
        self.description = description
        self.file = file
        self.body = .sql(statements: statements, transactional: transactional)
        self.foreignKeyChecks = Migration.hasDirective("immediate-foreign-keys", in: sql) ? .immediate : .deferred
        self.checksum = Migration.checksum(statements: statements, transactional: transactional, foreignKeyChecks: foreignKeyChecks)
        self.statementLines = Migration.lines(of: statements, in: sql)
    }

    /// A migration written in Swift, run in a transaction with its history row.
    ///
    /// With the default ``ForeignKeyChecks/deferred``, foreign keys are off
    /// while it runs (so it may rebuild tables, by hand or with
    /// ``TableRebuild``) and checked with `PRAGMA foreign_key_check` before
    /// it commits.
    public init(version: Int, description: String, foreignKeyChecks: ForeignKeyChecks = .deferred, _ run: @escaping @Sendable (Connection) throws -> Void) {
        self.version = version
        self.description = description
        self.file = nil
        self.body = .swift(run: run)
        self.foreignKeyChecks = foreignKeyChecks
        self.checksum = Hex.encode(SHA256.hash(Array("swift:\(version):\(description)".utf8)))
        self.statementLines = []
    }

    /// The checksum of statements: each is normalized (comments removed,
    /// whitespace folded), directives are kept, so only a change to what runs
    /// changes it. The default foreign key mode adds nothing, so checksums
    /// recorded before the mode existed still match.
    static func checksum(statements: [String], transactional: Bool, foreignKeyChecks: ForeignKeyChecks) -> String {
        var hash = SHA256()
        hash.update(Array((transactional ? "tx\n" : "no-tx\n").utf8))
        if foreignKeyChecks == .immediate { hash.update(Array("immediate-foreign-keys\n".utf8)) }
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

    /// False for a SQL file marked `-- strongroom: no-transaction`.
    var isTransactional: Bool {
        if case .sql(_, transactional: false) = body { return false }
        return true
    }

    /// True when `statement` carries the rebuild directive.
    static func isRebuild(_ statement: String) -> Bool {
        hasDirective("rebuild", in: statement)
    }

    /// True when this SQL migration rebuilds tables (with the directive, or
    /// an `ALTER TABLE` form the linked SQLite lacks).
    func rebuildsTables(sqliteVersion: SQLiteVersion) -> Bool {
        guard case .sql(let statements, _) = body else { return false }
        return statements.contains { Migration.isRebuild($0) || AlterTableRewrite.parse($0, sqliteVersion: sqliteVersion) != nil }
    }

    /// True for `BEGIN`, `COMMIT`, `END` and `ROLLBACK` (but not `ROLLBACK TO`
    /// a savepoint): statements that would end or nest the runner's transaction.
    static func isTransactionControl(_ statement: String) -> Bool {
        let words = SQLTokenizer.tokenize(statement, limit: 3)
        guard let first = words.first, first.kind == .word else { return false }
        switch first.text.asciiUppercased {
        case "BEGIN", "COMMIT", "END":
            return true
        case "ROLLBACK":
            return !words.dropFirst().contains { $0.isKeyword("TO") }
        default:
            return false
        }
    }

    /// The 1-based line of each statement's first word in `text`.
    ///
    /// Statements are found in the text byte for byte: compared by Character,
    /// a statement ending with `;` is not found where a combining mark follows
    /// the `;` in the text (the two make one Character).
    static func lines(of statements: [String], in text: String) -> [Int] {
        func newlines<S: Sequence<UInt8>>(_ s: S) -> Int { s.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 } }
        let bytes = Array(text.utf8)
        var lines: [Int] = []
        var searchFrom = 0
        var line = 1
        for statement in statements {
            let piece = Array(statement.utf8)
            guard let range = bytes[searchFrom...].firstRange(of: piece) else {
                lines.append(line)
                continue
            }
            line += newlines(bytes[searchFrom..<range.lowerBound])
            // Comments before the statement stay with it: count to its first token.
            let firstToken = SQLTokenizer.tokenize(statement, limit: 1).first?.range.lowerBound ?? 0
            lines.append(line + newlines(String(String.UnicodeScalarView(statement.unicodeScalars.prefix(firstToken))).utf8))
            line += newlines(piece)
            searchFrom = range.upperBound
        }
        return lines
    }
}
