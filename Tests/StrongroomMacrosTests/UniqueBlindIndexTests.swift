import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Issue 38, item 8 ("how to make a sealed e-mail unique"): a randomized
/// envelope differs for equal values, so UNIQUE on the sealed column is
/// useless; the blind index is equal for equal values, so UNIQUE belongs on
/// its index: `@Sealed(.indexed, unique: true)`.
extension TableMacroExpansionTests {
    @Test func aUniqueBlindIndex() {
        expand("""
            @Table("customer")
            struct Customer {
                @PrimaryKey var id: Int64?
                @Sealed(.indexed, unique: true) var email: String
            }
            """, """
            struct Customer {
                var id: Int64?
                var email: String
            }

            extension Customer: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "customer"

                static let databaseColumnNames: [String] = ["id", "email"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.id = try row.decode(at: 0)
                    self.email = try row.decode(at: 1)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.id, at: 0)
                    try binder.bind(self.email, at: 1)
                }

                static let databaseSealedColumns: [String] = ["email"]

                static let databaseRowKey: [String] = ["id"]

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "customer",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("id", type: "INTEGER"),
                        StrongroomMigrations.ColumnDefinition("email", type: "BLOB", notNull: true, sealing: .indexed, sealedIndexColumn: "email_index"),
                        StrongroomMigrations.ColumnDefinition("email_index", type: "BLOB"),
                    ],
                    primaryKey: ["id"],
                    indexes: [StrongroomMigrations.IndexDefinition("customer_email_index", columns: ["email_index"], unique: true)]
                )
            }
            """)
    }

    @Test func uniqueOnARandomizedSealedColumn() {
        expand("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @Sealed(unique: true) var note: String
            }
            """, """
            struct T {
                var id: Int64
                var note: String
            }
            """, diagnostics: [DiagnosticSpec(
                message: "'note' is sealed randomized: equal values give different envelopes, so UNIQUE would hold for any values; seal it @Sealed(.indexed, unique: true) to make its blind index UNIQUE",
                line: 4, column: 21)])
    }

    /// A deterministic envelope is equal for equal values: UNIQUE belongs on the column itself.
    @Test func uniqueOnADeterministicSealedColumn() {
        expand("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @Sealed(.deterministic, unique: true) var code: String
            }
            """, """
            struct T {
                var id: Int64
                var code: String
            }
            """, diagnostics: [DiagnosticSpec(
                message: "'code' is sealed deterministic, with no blind index for unique: to apply to; its envelopes are equal for equal values, so make the column itself unique with @Column(unique: true)",
                line: 4, column: 37)])
    }
}
