/// An error from sealed columns: a code to match, a sentence a user can act
/// on, and where it happened (table, column, row). It never contains a
/// plaintext value or key material; a row is named by its primary key.
///
/// ```swift
/// do {
///     let email = try cipher.open(value, table: "customer", column: "email", rowKey: [.integer(7)])
/// } catch let error as FieldError where error.code == .tampered {
///     // the envelope was changed, moved from another row or column, or the keyring is not the one it was sealed with
/// }
/// ```
public struct FieldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. The raw value is stable (CLI `--json`).
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The envelope does not authenticate: a bit changed, it was moved
        /// from another row or column, or the key with its id is not the
        /// one it was sealed with (another keyring).
        case tampered = "tampered"
        /// The envelope names a key id the keyring does not hold.
        case unknownKeyID = "unknown_key_id"
        /// The value is too short, or its header is not one Strongroom writes.
        case malformedEnvelope = "malformed_envelope"
        /// A plain value (not a BLOB envelope) where a sealed one was expected.
        case notSealed = "not_sealed"
        /// The keyring file is malformed, or an operation on it is not possible.
        case keyring = "keyring"
        /// A blind index's transformation does not take the value (a date
        /// that is not a date, text with no digit for `digits`).
        case untransformable = "untransformable"
        /// The API was used in a way it does not support.
        case misuse = "misuse"
        /// The registry of sealed columns and blind indexes does not match
        /// its signature under the field keyring (``RegistrySignature``): a
        /// finding of ``ColumnSealing/failures(keyring:in:limit:)``.
        case untrustedRegistry = "untrusted_registry"
    }

    /// What kind of failure, to match on.
    public let code: Code
    /// What went wrong and what to do; never a value or key material.
    public let message: String
    /// The table, column and row concerned, when known.
    public let table: String?
    /// The column of the value, when one is concerned.
    public let column: String?
    /// The row's primary key, as text (never a sealed value).
    public let row: String?

    /// An error with its code, message and place (table, column, row).
    public init(_ code: Code, _ message: String, table: String? = nil, column: String? = nil, row: String? = nil) {
        self.code = code
        self.message = message
        self.table = table
        self.column = column
        self.row = row
    }

    /// The message.
    public var description: String { message }
}
