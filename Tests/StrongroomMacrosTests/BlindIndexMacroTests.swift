import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Issue 39, item 1: blind indexes declared in `@Table(blindIndexes:)`, and
/// `@Table(unique:)` naming a full-length blind index's column (a truncated
/// one cannot be unique: a compile error that says why).
extension TableMacroExpansionTests {
    @Test func blindIndexesBecomeColumnsIndexesAndDefinitions() {
        expand("""
            @Table("customer", unique: [["email_index"]], blindIndexes: [
                .index("email_folded", on: "email", bits: 16, transformations: [.normalizedCaseFolded]),
                .compound("name_born", bits: 12, parts: [.init("last_name", [.normalizedCaseFolded]), .init("born", [.year])]),
            ])
            struct Customer {
                @PrimaryKey var id: Int64?
                @Sealed(.indexed) var email: String
                @Column("last_name") @Sealed var lastName: String
                var born: String?
            }
            """, """
            struct Customer {
                var id: Int64?
                var email: String
                var lastName: String
                var born: String?
            }

            extension Customer: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "customer"

                static let databaseColumnNames: [String] = ["id", "email", "last_name", "born"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.id = try row.decode(at: 0)
                    self.email = try row.decode(at: 1)
                    self.lastName = try row.decode(at: 2)
                    self.born = try row.decode(at: 3)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.id, at: 0)
                    try binder.bind(self.email, at: 1)
                    try binder.bind(self.lastName, at: 2)
                    try binder.bind(self.born, at: 3)
                }

                static let databaseSealedColumns: [String] = ["email", "last_name"]

                static let databaseRowKey: [String] = ["id"]

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "customer",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("id", type: "INTEGER"),
                        StrongroomMigrations.ColumnDefinition("email", type: "BLOB", notNull: true, sealing: .indexed, sealedIndexColumn: "email_index"),
                        StrongroomMigrations.ColumnDefinition("last_name", type: "BLOB", notNull: true, sealing: .randomized),
                        StrongroomMigrations.ColumnDefinition("born", type: "TEXT"),
                        StrongroomMigrations.ColumnDefinition("email_index", type: "BLOB"),
                        StrongroomMigrations.ColumnDefinition("email_folded", type: "BLOB"),
                        StrongroomMigrations.ColumnDefinition("name_born", type: "BLOB"),
                    ],
                    primaryKey: ["id"],
                    uniqueKeys: [["email_index"]],
                    indexes: [StrongroomMigrations.IndexDefinition("customer_email_index", columns: ["email_index"]), StrongroomMigrations.IndexDefinition("customer_email_folded", columns: ["email_folded"]), StrongroomMigrations.IndexDefinition("customer_name_born", columns: ["name_born"])],
                    blindIndexes: ([.index("email_folded", on: "email", bits: 16, transformations: [.normalizedCaseFolded]), .compound("name_born", bits: 12, parts: [.init("last_name", [.normalizedCaseFolded]), .init("born", [.year])])] as [StrongroomMacros.TableBlindIndex]).map {
                        $0.blindIndex(in: "customer")
                    }
                )
            }
            """)
    }

    @Test func aTruncatedBlindIndexCannotBeUnique() {
        expand("""
            @Table(unique: [["email_folded"]], blindIndexes: [.index("email_folded", on: "email", bits: 16, unique: true)])
            struct T {
                @PrimaryKey var id: Int64
                @Sealed var email: String
            }
            """, """
            struct T {
                var id: Int64
                var email: String
            }
            """, diagnostics: [
                DiagnosticSpec(message: "blind index 'email_folded' is truncated to 16 bits: different values may share a truncated index value, so UNIQUE would refuse a value for another's sake; make it 128 bits to make it unique",
                               line: 1, column: 51),
                DiagnosticSpec(message: "blind index 'email_folded' is truncated to 16 bits: different values may share a truncated index value, so UNIQUE would refuse a value for another's sake; make it 128 bits to make it unique",
                               line: 1, column: 17),
            ])
    }

    @Test func aBlindIndexOutOfRangeOrNamedLikeAColumnIsRefused() {
        expand("""
            @Table(blindIndexes: [.index("email", on: "email", bits: 0), .index("x", on: "email"), .index("x", on: "email", bits: 8)])
            struct T {
                @PrimaryKey var id: Int64
                @Sealed var email: String
            }
            """, """
            struct T {
                var id: Int64
                var email: String
            }
            """, diagnostics: [
                DiagnosticSpec(message: "blind index 'email' is 0 bits long; a blind index has 1 to 128 bits", line: 1, column: 23),
                DiagnosticSpec(message: "blind index 'email' is named like a column of this table or another of its blind indexes; its values need a column of their own: name it apart", line: 1, column: 23),
                DiagnosticSpec(message: "blind index 'x' is named like a column of this table or another of its blind indexes; its values need a column of their own: name it apart", line: 1, column: 88),
            ])
    }

    @Test func aBlindIndexOfPlainColumnsOrUnknownOnesIsRefused() {
        expand("""
            @Table(blindIndexes: [.index("c", on: "country", bits: 8), .index("d", on: "nope", bits: 8), .plain("x")])
            struct T {
                @PrimaryKey var id: Int64
                @Sealed var email: String
                var country: String
            }
            """, """
            struct T {
                var id: Int64
                var email: String
                var country: String
            }
            """, diagnostics: [
                DiagnosticSpec(message: "blind index 'c' covers no @Sealed column of this table: a blind index hides sealed values; index a plain column with @Indexed", line: 1, column: 23),
                DiagnosticSpec(message: "blind index 'd' names 'nope', which is no column of this table", line: 1, column: 60),
                DiagnosticSpec(message: "blind index 'd' covers no @Sealed column of this table: a blind index hides sealed values; index a plain column with @Indexed", line: 1, column: 60),
                DiagnosticSpec(message: "@Table(blindIndexes:) takes .index(\"name\", on: \"column\", bits:, transformations:, unique:) and .compound(\"name\", bits:, parts: [.init(\"column\", [transformations])], unique:), with literal names, bits and unique",
                               line: 1, column: 94),
            ])
    }
}
