import Strongroom

/// What sealed values are bound to beyond their table, column and row: a
/// tenant or database identifier, for a fleet of databases that share one
/// field keyring. With a context, a value copied from tenant A's row 7 does
/// not open in tenant B's row 7, and equal values seal (and blind-index)
/// differently in each tenant. Without one (the default), values are bound
/// to table, column and row only.
///
/// ```swift
/// let tenant = try FieldContext("tenant-4711")
/// var config = Configuration(key: databaseKey)
/// config.seal(columns, keyring: keyring, context: tenant)
/// // Once, when the database is made (tools such as `strongroom verify` read it there):
/// try queue.write { db in try SealedColumnRegistry.record(context: tenant, keyring: keyring, in: db) }
/// ```
///
/// The context goes into the associated data of every envelope and into
/// every blind index (<doc:SealedValueFormat>). It is no secret; the
/// database records it for its tools, and a connection configured with
/// another context than the one recorded is refused.
public struct FieldContext: Sendable, Hashable, CustomStringConvertible {
    /// The identifier, as given.
    public let identifier: String

    /// The largest identifier, in UTF-8 bytes.
    public static let maximumByteCount = 255

    /// A context; `identifier` is 1 to 255 bytes of UTF-8.
    ///
    /// - Throws: ``FieldError/Code/misuse`` for an empty or longer identifier.
    public init(_ identifier: String) throws(FieldError) {
        let count = identifier.utf8.count
        guard count > 0, count <= Self.maximumByteCount else {
            throw FieldError(.misuse, "A field context is 1 to \(Self.maximumByteCount) bytes of UTF-8 (a tenant or database identifier); this one has \(count).")
        }
        self.identifier = identifier
    }

    /// The identifier.
    public var description: String { identifier }

    /// `u32(len) ‖ identifier`: what is appended to the associated data and
    /// put before a blind index's plaintext.
    var boundBytes: [UInt8] {
        var bytes: [UInt8] = []
        FieldEnvelope.appendBigEndian(UInt32(identifier.utf8.count), to: &bytes)
        return bytes + Array(identifier.utf8)
    }
}
