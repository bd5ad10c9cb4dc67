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
    let body: ([DatabaseValue]) throws -> DatabaseValue

    /// A function named `name` taking `argumentCount` arguments (nil: any
    /// number); `pure` functions (same result for the same arguments, no side
    /// effects) may be used in indexes and CHECK constraints.
    ///
    public init(_ name: String, argumentCount: Int? = nil, pure: Bool = false, _ body: @escaping ([DatabaseValue]) throws -> DatabaseValue) {
        self.name = name
        self.argumentCount = argumentCount
        self.isPure = pure
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

extension Connection {
    /// Makes `function` callable from SQL on this connection, replacing a
    /// function of the same name and argument count.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` for a name or argument count
    ///   SQLite does not take.
    public func add(function: DatabaseFunction) throws(StrongroomError) {
        try checkOpen()
        let box = Unmanaged.passRetained(function)
        var flags = SQLITE_UTF8
        if function.isPure { flags |= SQLITE_DETERMINISTIC }
        // sqlite3_create_function_v2 calls xDestroy (releasing the box) when
        // the function is replaced or the connection closes, and also when
        // it fails to register.
        let status = sqlite3_create_function_v2(handle, function.name, Int32(function.argumentCount ?? -1), flags, box.toOpaque(), { context, count, values in
            guard let application = sqlite3_user_data(context) else { return }
            Unmanaged<DatabaseFunction>.fromOpaque(application).takeUnretainedValue().call(context, count, values)
        }, nil, nil, { application in
            guard let application else { return }
            Unmanaged<DatabaseFunction>.fromOpaque(application).release()
        })
        guard status == SQLITE_OK else {
            throw StrongroomError(.misuse, "SQLite refused the function \(function.name) (\(function.argumentCount.map(String.init) ?? "any number of") arguments): \(String(cString: sqlite3_errmsg(handle))).", path: path)
        }
    }

    /// Removes a function added with ``add(function:)``.
    public func remove(function: DatabaseFunction) throws(StrongroomError) {
        try checkOpen()
        let status = sqlite3_create_function_v2(handle, function.name, Int32(function.argumentCount ?? -1), SQLITE_UTF8, nil, nil, nil, nil, nil)
        guard status == SQLITE_OK else { throw lastError(status, sql: nil) }
    }
}
