internal import CSQLCipher

/// A Swift function callable from SQL on a connection.
///
/// ```swift
/// let reverse = DatabaseFunction("reverse_text", argumentCount: 1, pure: true) { arguments in
///     guard case .text(let text) = arguments[0] else { return .null }
///     return .text(String(text.reversed()))
/// }
/// try db.add(function: reverse)
/// let value = try db.fetchOne(String.self, sql: "SELECT reverse_text('abc')")   // "cba"
/// ```
///
/// To have a function on every connection of a ``DatabaseQueue`` or
/// ``DatabasePool``, add it in ``Configuration/prepareConnection(_:)``.
///
/// An error thrown by the function fails the statement with its message
/// (keep secrets out of it). A TEXT argument that is not valid UTF-8 fails
/// the statement before the function runs: a Swift `String` cannot hold it
/// unchanged. The function runs on the connection's thread,
/// inside the statement; it must not use the connection it was called from.
public final class DatabaseFunction {
    /// The SQL name.
    public let name: String
    /// The number of arguments, or nil for any number.
    public let argumentCount: Int?
    /// True when the same arguments always give the same result
    /// (`SQLITE_DETERMINISTIC`): SQLite may then compute it once, and use it
    /// in indexes and CHECK constraints.
    public let isPure: Bool
    /// True when only the application's own statements may call it: a
    /// reference from SQL stored in the database (a trigger, a view, a
    /// CHECK constraint, a DEFAULT, an index, a generated column) fails its
    /// statement with ``StrongroomError/Code/untrustedSchema``, before the
    /// function runs. For functions that use a secret the database's key
    /// does not give (a keyring): whoever can write the schema could
    /// otherwise have the application's connection run them on its behalf.
    ///
    /// Enforced on every SQLite: the authorizer refuses references in
    /// triggers and views as a statement compiles; while a statement runs,
    /// only the direct-only functions its own text calls may run; before a
    /// statement that calls some and writes runs, the schema of the main and
    /// every attached database is checked for any mention of them (a read
    /// runs no CHECK, DEFAULT or index expression); and on SQLite 3.30 and
    /// later, `SQLITE_DIRECTONLY`.
    public let isDirectOnly: Bool
    let body: ([DatabaseValue]) throws -> DatabaseValue

    /// A function named `name` taking `argumentCount` arguments (nil: any
    /// number); `pure` functions (same result for the same arguments, no side
    /// effects) may be used in indexes and CHECK constraints; `directOnly`
    /// ones only in the application's own statements (see ``isDirectOnly``).
    ///
    public init(_ name: String, argumentCount: Int? = nil, pure: Bool = false, directOnly: Bool = false,
                _ body: @escaping ([DatabaseValue]) throws -> DatabaseValue) {
        self.name = name
        self.argumentCount = argumentCount
        self.isPure = pure
        self.isDirectOnly = directOnly
        self.body = body
    }

    /// Calls the Swift body with SQLite's arguments and sets the result.
    fileprivate func call(_ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            guard let value = Self.value(values?[i]) else {
                // A Swift String cannot hold these bytes: converting them would
                // change the value (every invalid byte becomes U+FFFD).
                sqlite3_result_error(context, "\(name): argument \(i + 1) is TEXT that is not valid UTF-8; store such bytes as a BLOB.", -1)
                return
            }
            arguments.append(value)
        }
        do {
            switch try body(arguments) {
            case .null: sqlite3_result_null(context)
            case .integer(let n): sqlite3_result_int64(context, n)
            case .real(let d): sqlite3_result_double(context, d)
            case .text(let s):
                var text = s
                text.withUTF8 { utf8 in
                    sqlite3_result_text(context, UnsafeRawPointer(utf8.baseAddress ?? UnsafePointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self),
                                        Int32(utf8.count), strongroom_sqlite_transient())
                }
            case .blob(let b):
                b.withUnsafeBytes { bytes in
                    // A zero-length blob needs a non-NULL pointer, or SQLite stores NULL.
                    sqlite3_result_blob(context, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), strongroom_sqlite_transient())
                }
            }
        } catch {
            sqlite3_result_error(context, "\(error)", -1)
        }
    }

    /// The argument, or nil for TEXT that is not valid UTF-8.
    private static func value(_ value: OpaquePointer?) -> DatabaseValue? {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(value))
            guard let text = sqlite3_value_text(value) else { return .text("") }
            return String(validating: UnsafeBufferPointer(start: text, count: count), as: UTF8.self).map { .text($0) }
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let blob = sqlite3_value_blob(value) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default:
            return .null
        }
    }
}

/// A function as one connection registered it: a direct-only one runs only
/// while a statement whose own text calls it steps.
final class RegisteredFunction {
    let function: DatabaseFunction
    let state: ConnectionState
    /// The function's direct-only bit on its connection; 0 for any other.
    let directOnlyBit: UInt64

    init(function: DatabaseFunction, state: ConnectionState, directOnlyBit: UInt64) {
        self.function = function
        self.state = state
        self.directOnlyBit = directOnlyBit
    }

    func call(_ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
        if directOnlyBit != 0 && state.allowedDirectOnlyFunctions & directOnlyBit == 0 {
            let name = function.name
            state.refusal = (.untrustedSchema, state.schemaChangedWhileStepping
                ? "The database's schema changed (another connection changed it) just as a statement calling \(name)() started; it was stopped before \(name)() ran under a schema not yet checked. Roll back the transaction it ran in (rows it wrote before it stopped may remain) and run it again."
                : "SQL stored in the database's schema (a CHECK constraint, a DEFAULT, an index or a generated column) called \(name)(), which only the application's own statements may call: it is SQL the application did not write. Nothing was written; find it with SELECT type, name, sql FROM main.sqlite_master WHERE sql LIKE '%\(name)%', remove it, and find out who added it.")
            sqlite3_result_error(context, "\(name)() may only be called by the application's own statements", -1)
            return
        }
        function.call(context, count, values)
    }
}

/// `SQLITE_DIRECTONLY` (SQLite 3.30): SQLite itself refuses the function in
/// triggers, views and schema structures. Older headers lack the constant.
private let sqliteDirectOnlyFlag: Int32 = 0x0008_0000

extension Connection {
    /// Makes `function` callable from SQL on this connection, replacing a
    /// function of the same name and argument count.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` for a name or argument count
    ///   SQLite does not take.
    public func add(function: DatabaseFunction) throws(StrongroomError) {
        try checkOpen()
        let directOnlyBit = function.isDirectOnly ? try directOnlyBit(forFunction: function.name) : 0
        let box = Unmanaged.passRetained(RegisteredFunction(function: function, state: state, directOnlyBit: directOnlyBit))
        var flags = SQLITE_UTF8
        if function.isPure { flags |= SQLITE_DETERMINISTIC }
        if function.isDirectOnly && sqlite3_libversion_number() >= 3_030_000 { flags |= sqliteDirectOnlyFlag }
        // sqlite3_create_function_v2 calls xDestroy (releasing the box) when
        // the function is replaced or the connection closes, and also when
        // it fails to register.
        let status = sqlite3_create_function_v2(handle, function.name, Int32(function.argumentCount ?? -1), flags, box.toOpaque(), { context, count, values in
            guard let application = sqlite3_user_data(context) else { return }
            Unmanaged<RegisteredFunction>.fromOpaque(application).takeUnretainedValue().call(context, count, values)
        }, nil, nil, { application in
            guard let application else { return }
            Unmanaged<RegisteredFunction>.fromOpaque(application).release()
        })
        guard status == SQLITE_OK else {
            throw StrongroomError(.misuse, "SQLite refused the function \(function.name) (\(function.argumentCount.map(String.init) ?? "any number of") arguments): \(String(cString: sqlite3_errmsg(handle))).", path: path)
        }
    }

    /// Removes a function added with ``add(function:)``.
    ///
    /// SQLite refuses while a statement of the connection is running; the
    /// statements the connection caches are then released, and the removal
    /// tried again.
    public func remove(function: DatabaseFunction) throws(StrongroomError) {
        try checkOpen()
        func unregister() -> Int32 {
            sqlite3_create_function_v2(handle, function.name, Int32(function.argumentCount ?? -1), SQLITE_UTF8, nil, nil, nil, nil, nil)
        }
        var status = unregister()
        if status == SQLITE_BUSY {
            clearStatementCaches()
            status = unregister()
        }
        guard status == SQLITE_OK else { throw lastError(status, sql: nil) }
    }
}
