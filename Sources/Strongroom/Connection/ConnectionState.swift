import Synchronization
/// What a connection's statements need to know of it on every step, held
/// strongly by each: reading it costs no retain of the connection (a
/// statement's `unowned` reference to its connection costs a retain and a
/// release on every access).
///
/// Its flag is written once, when the handle closes (by `close()` or the
/// connection's deinit, on whichever thread runs it); it is read without
/// runtime exclusivity checks, which would cost a call per row: every
/// access is a single load or store, and statements are not `Sendable`.
final class ConnectionState {
    @exclusivity(unchecked) var isClosed = false {
        didSet { refusesSteps = isClosed || transactionLost != nil }
    }
    /// `isClosed || transactionLost != nil`, kept as one flag: the only
    /// check a statement's step makes before `sqlite3_step`.
    @exclusivity(unchecked) private(set) var refusesSteps = false
    /// The direct-only functions (their bits, see `Connection.directOnlyFunctions`)
    /// the statement being stepped calls in its own text: the only ones
    /// that may run now. Set around each `sqlite3_step`.
    @exclusivity(unchecked) var allowedDirectOnlyFunctions: UInt64 = 0
    /// The direct-only functions the statement being prepared calls in its
    /// own text, as the authorizer saw them.
    @exclusivity(unchecked) var referencedDirectOnlyFunctions: UInt64 = 0
    /// Set when SQLite re-prepared the statement being stepped (another
    /// connection changed the schema): its direct-only functions are then
    /// withdrawn until the new schema is checked.
    @exclusivity(unchecked) var schemaChangedWhileStepping = false
    /// Set while a statement steps whose schema check was made inside the
    /// transaction it runs in: a re-prepare then withdraws nothing.
    @exclusivity(unchecked) var scanHoldsWhileStepping = false
    /// How many `inTransaction` closures run now (0 or 1).
    @exclusivity(unchecked) var transactionBodies = 0
    /// Set when a statement failed inside an `inTransaction` closure and
    /// SQLite rolled the whole transaction back by itself (an interrupt, a
    /// full disk): the closure's later statements would run outside any
    /// transaction, each committed at once, so they are refused with this
    /// code until the closure ends.
    @exclusivity(unchecked) var transactionLost: StrongroomError.Code? {
        didSet { refusesSteps = isClosed || transactionLost != nil }
    }
    /// Set, for the connection's life, once SQL naming `defer_foreign_keys`
    /// was compiled on it (``noteCompiled(_:length:)``): SQLite sets a flag pragma
    /// as it compiles it, so only then can deferred foreign keys be on.
    /// Until then a grouped write need not read the flag to undo it.
    @exclusivity(unchecked) var mayDeferForeignKeys = false

    /// After SQLite compiled the statement at the start of `sql` on this
    /// connection (`length` bytes of it; nil when the compile failed, and
    /// the whole text counts): notes whether it names `defer_foreign_keys`,
    /// as a whole name, in any ASCII case, quoted or not (as SQLite reads
    /// pragma names). Only the statement compiled is read, not the rest of
    /// a script, so a long script costs no more than its length.
    func noteCompiled(_ sql: String, length: Int?) {
        guard !mayDeferForeignKeys else { return }
        mayDeferForeignKeys = Self.namesDeferForeignKeys(sql, length: length)
    }

    private static let deferForeignKeys = Array("defer_foreign_keys".utf8)

    /// Whether the first `length` bytes of `sql` (all of it when nil)
    /// name `defer_foreign_keys`, in any ASCII case, as the authorizer
    /// looks for a function's name in a statement.
    static func namesDeferForeignKeys(_ sql: String, length: Int? = nil) -> Bool {
        // One copy of the bytes, folded (this runs on every compile until
        // the name is seen).
        let folded = AuthorizerPolicy.asciiLowercased(bytes: sql.utf8.prefix(length ?? Int.max))
        return AuthorizerPolicy.mentions(folded, deferForeignKeys)
    }

    /// Set by ``Connection/interrupt()`` (from any thread), cleared by
    /// ``Connection/clearInterrupt()``: what the progress handler of an
    /// async access reads (``Connection/checkingInterruptRequests(_:)``).
    /// SQLite forgets its own interrupt when a statement starts while none
    /// is active; this one stays until the access ends.
    let interruptRequested = Atomic<Bool>(false)
    /// Whether the interrupt-request check is installed as the progress
    /// handler (``Connection/withProgressHandler(every:_:_:)`` puts it back).
    var checksInterruptRequests = false

    /// Whether `PRAGMA query_only` is set: a queue's read sets it and
    /// leaves it set for the next read (each set or clear makes SQLite
    /// expire every prepared statement); an access that may write clears it.
    var queryOnly = false
    /// Why the authorizer or a direct-only function refused, for the error
    /// of the statement that failed (taken by `Connection.lastError`).
    var refusal: (code: StrongroomError.Code, message: String)?
    /// Set while a statement is compiled only to be looked at (never run):
    /// the authorizer then allows everything and records each column read
    /// (see `Connection.inspect(sql:_:)`).
    var inspectedReads: [ReadAccess]?
    /// While a statement is inspected: the innermost trigger or view of
    /// every action the authorizer reports (a trigger's `SELECT RAISE(…)`
    /// or function call included, which reads no column).
    var inspectedInnermost: Set<String> = []
}

/// One column read (`SQLITE_READ`), or one table written (`SQLITE_INSERT`,
/// `SQLITE_UPDATE`, `SQLITE_DELETE`), as the authorizer reports it while a
/// statement compiles.
struct ReadAccess: Hashable {
    /// The table or view read from.
    let table: String
    let column: String
    /// The schema the table or view is in: `main`, `temp`, or an attached one.
    let schema: String
    /// The innermost view, trigger or common table expression the read is
    /// in; nil for the statement's own text.
    let innermost: String?
    /// True for a write: `column` is the column an UPDATE sets, or empty.
    var writes = false
}
