/// The columns a row signature covers, and the column that holds it: what
/// a ``ColumnTransform`` that signs a table's rows tells a read
/// (``ColumnTransform/signedRowColumns(of:)``), so that the read finds them
/// by name among its result columns and checks the signature before it
/// hands out any value of the row.
///
/// The names come from the application's declaration, never from the
/// database.
public struct SignedRowColumns: Sendable, Hashable {
    /// The columns the signature covers, in the order a
    /// ``RowSignatureVerifier`` takes their stored values.
    public let covered: [String]
    /// The column that holds the signature.
    public let signature: String

    /// The columns `covered`, signed in column `signature`.
    public init(covered: [String], signature: String) {
        self.covered = covered
        self.signature = signature
    }
}
