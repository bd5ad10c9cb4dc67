import StrongroomMacrosPlugin
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Foundation
import Testing

/// What `@Table` writes for each attribute, and what it refuses.
@Suite("@Table expansion and diagnostics")
struct TableMacroExpansionTests {
    static let specs: [String: MacroSpec] = [
        "Table": MacroSpec(type: TableMacro.self, conformances: ["TableRecord", "TableModel"]),
        "PrimaryKey": MacroSpec(type: MarkerMacro.self),
        "Column": MacroSpec(type: MarkerMacro.self),
        "Sealed": MacroSpec(type: MarkerMacro.self),
        "Indexed": MacroSpec(type: MarkerMacro.self),
        "Ignored": MacroSpec(type: MarkerMacro.self),
    ]

    func expand(_ source: String, _ expanded: String, diagnostics: [DiagnosticSpec] = [], applyFixIts: [String]? = nil, fixedSource: String? = nil,
                sourceLocation: SourceLocation = #_sourceLocation) {
        assertMacroExpansion(source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: Self.specs,
                             applyFixIts: applyFixIts, fixedSource: fixedSource, indentationWidth: .spaces(4)) { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    }

    @Test func plainColumnsPrimaryKeyAndOptionals() {
        expand("""
            @Table("artist")
            public struct Artist {
                @PrimaryKey var id: Int64
                var name: String?
                var born: Date
                static var count = 0
                var display: String { name ?? "" }
            }
            """, """
            public struct Artist {
                var id: Int64
                var name: String?
                var born: Date
                static var count = 0
                var display: String { name ?? "" }
            }

            extension Artist: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                public static let databaseTableName = "artist"

                public static let databaseColumnNames: [String] = ["id", "name", "born"]

                public init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.id = try row.decode(at: 0)
                    self.name = try row.decode(at: 1)
                    self.born = try row.decode(at: 2)
                }

                public func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.id, at: 0)
                    try binder.bind(self.name, at: 1)
                    try binder.bind(self.born, at: 2)
                }

                public static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "artist",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("id", type: "INTEGER", notNull: true),
                        StrongroomMigrations.ColumnDefinition("name", type: "TEXT"),
                        StrongroomMigrations.ColumnDefinition("born", type: "TEXT", notNull: true),
                    ],
                    primaryKey: ["id"]
                )
            }
            """)
    }

    @Test func everyAttribute() {
        expand("""
            @Table("customer", unique: [["first", "last"]])
            struct Customer {
                @PrimaryKey var id: Int64?
                var first: String
                var last: String
                @Column("support_rep_id", references: "employee", column: "id", onDelete: .setNull, onUpdate: .cascade) var supportRep: Int64?
                @Column(unique: true, default: "'none'") var code: String
                @Indexed var country: String?
                @Indexed("by_city", unique: true) var city: String
                @Sealed var phone: String?
                @Sealed(.deterministic) var region: String
                @Sealed(.indexed) var email: String
                @Sealed(.indexed, indexColumn: "fax_bidx") var fax: Data?
                @Column(type: "TEXT") var tier: Tier
                var photo: [UInt8]
                @Ignored var cache: [String: Int] = [:]
            }
            """, """
            struct Customer {
                var id: Int64?
                var first: String
                var last: String
                var supportRep: Int64?
                var code: String
                var country: String?
                var city: String
                var phone: String?
                var region: String
                var email: String
                var fax: Data?
                var tier: Tier
                var photo: [UInt8]
                var cache: [String: Int] = [:]
            }

            extension Customer: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "customer"

                static let databaseColumnNames: [String] = ["id", "first", "last", "support_rep_id", "code", "country", "city", "phone", "region", "email", "fax", "tier", "photo"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.id = try row.decode(at: 0)
                    self.first = try row.decode(at: 1)
                    self.last = try row.decode(at: 2)
                    self.supportRep = try row.decode(at: 3)
                    self.code = try row.decode(at: 4)
                    self.country = try row.decode(at: 5)
                    self.city = try row.decode(at: 6)
                    self.phone = try row.decode(at: 7)
                    self.region = try row.decode(at: 8)
                    self.email = try row.decode(at: 9)
                    self.fax = try row.decode(at: 10)
                    self.tier = try row.decode(at: 11)
                    self.photo = try row.decode(at: 12)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.id, at: 0)
                    try binder.bind(self.first, at: 1)
                    try binder.bind(self.last, at: 2)
                    try binder.bind(self.supportRep, at: 3)
                    try binder.bind(self.code, at: 4)
                    try binder.bind(self.country, at: 5)
                    try binder.bind(self.city, at: 6)
                    try binder.bind(self.phone, at: 7)
                    try binder.bind(self.region, at: 8)
                    try binder.bind(self.email, at: 9)
                    try binder.bind(self.fax, at: 10)
                    try binder.bind(self.tier, at: 11)
                    try binder.bind(self.photo, at: 12)
                }

                static let databaseSealedColumns: [String] = ["phone", "region", "email", "fax"]

                static let databaseRowKey: [String] = ["id"]

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "customer",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("id", type: "INTEGER"),
                        StrongroomMigrations.ColumnDefinition("first", type: "TEXT", notNull: true),
                        StrongroomMigrations.ColumnDefinition("last", type: "TEXT", notNull: true),
                        StrongroomMigrations.ColumnDefinition("support_rep_id", type: "INTEGER"),
                        StrongroomMigrations.ColumnDefinition("code", type: "TEXT", notNull: true, defaultSQL: "'none'"),
                        StrongroomMigrations.ColumnDefinition("country", type: "TEXT"),
                        StrongroomMigrations.ColumnDefinition("city", type: "TEXT", notNull: true),
                        StrongroomMigrations.ColumnDefinition("phone", type: "BLOB", sealing: .randomized),
                        StrongroomMigrations.ColumnDefinition("region", type: "BLOB", notNull: true, sealing: .deterministic),
                        StrongroomMigrations.ColumnDefinition("email", type: "BLOB", notNull: true, sealing: .indexed, sealedIndexColumn: "email_index"),
                        StrongroomMigrations.ColumnDefinition("fax", type: "BLOB", sealing: .indexed, sealedIndexColumn: "fax_bidx"),
                        StrongroomMigrations.ColumnDefinition("tier", type: "TEXT", notNull: true),
                        StrongroomMigrations.ColumnDefinition("photo", type: "BLOB", notNull: true),
                        StrongroomMigrations.ColumnDefinition("email_index", type: "BLOB"),
                        StrongroomMigrations.ColumnDefinition("fax_bidx", type: "BLOB"),
                    ],
                    primaryKey: ["id"],
                    uniqueKeys: [["code"], ["first", "last"]],
                    foreignKeys: [StrongroomMigrations.ForeignKeyDefinition(["support_rep_id"], references: "employee", columns: ["id"], onDelete: .setNull, onUpdate: .cascade)],
                    indexes: [StrongroomMigrations.IndexDefinition("customer_country", columns: ["country"]), StrongroomMigrations.IndexDefinition("by_city", columns: ["city"], unique: true), StrongroomMigrations.IndexDefinition("customer_email_index", columns: ["email_index"]), StrongroomMigrations.IndexDefinition("customer_fax_bidx", columns: ["fax_bidx"])]
                )
            }
            """)
    }

    @Test func compositePrimaryKeyAndDefaultName() {
        expand("""
            @Table(primaryKey: ["playlist_id", "track_id"])
            struct PlaylistTrack {
                @Column("playlist_id") var playlist: Int
                @Column("track_id") var track: Int
            }
            """, """
            struct PlaylistTrack {
                var playlist: Int
                var track: Int
            }

            extension PlaylistTrack: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "playlistTrack"

                static let databaseColumnNames: [String] = ["playlist_id", "track_id"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.playlist = try row.decode(at: 0)
                    self.track = try row.decode(at: 1)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.playlist, at: 0)
                    try binder.bind(self.track, at: 1)
                }

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "playlistTrack",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("playlist_id", type: "INTEGER", notNull: true),
                        StrongroomMigrations.ColumnDefinition("track_id", type: "INTEGER", notNull: true),
                    ],
                    primaryKey: ["playlist_id", "track_id"]
                )
            }
            """)
    }

    @Test func refusesWhatCannotBeStored() {
        expand("""
            @Table
            enum Nope {}
            """, """
            enum Nope {}
            """, diagnostics: [DiagnosticSpec(message: "@Table applies to a struct", line: 1, column: 1)])
    }

    /// The source with the attributes gone, as the compiler would see it
    /// when `@Table` writes nothing.
    static func stripped(_ source: String) -> String {
        source.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line -> String? in
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("@Table") { return nil }
            var text = String(line)
            for marker in ["@PrimaryKey ", "@Sealed ", "@Ignored ", "@Column(type: \"TEXT\") ", "@Column(default: \"'none'\") "] { text = text.replacingOccurrences(of: marker, with: "") }
            return text
        }.joined(separator: "\n")
    }

    func refuses(_ source: String, _ message: String, line: Int, column: Int, fixIt: String? = nil, fixed: String? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) {
        expand(source, Self.stripped(source),
               diagnostics: [DiagnosticSpec(message: message, line: line, column: column, fixIts: fixIt.map { [FixItSpec(message: $0)] } ?? [])],
               applyFixIts: fixIt.map { [$0] }, fixedSource: fixed, sourceLocation: sourceLocation)
    }

    @Test func aPropertyWithoutAType() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var name = "x"
            }
            """, "@Table needs the type of 'name' written out; add a type annotation", line: 4, column: 9)
    }

    @Test func twoPrimaryKeysWithAFixIt() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @PrimaryKey var code: String
            }
            """, "a second @PrimaryKey on 'code'; for a key of several columns, write @Table(primaryKey: [\"a\", \"b\"])", line: 4, column: 5,
                fixIt: "remove this @PrimaryKey", fixed: """
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var code: String
            }
            """)
    }

    @Test func aTypeNoColumnHoldsWithAFixIt() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var tags: [String]
            }
            """, "'tags' has type '[String]', which no column can hold; mark it @Ignored or store it as Data", line: 4, column: 15,
                fixIt: "mark it @Ignored", fixed: """
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @Ignored var tags: [String]
            }
            """)
    }

    @Test func aTypeWithoutAKnownSQLTypeWithAFixIt() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var genre: Genre
            }
            """, "@Table cannot tell the SQL type of 'genre' (Genre); write it with @Column(type: \"TEXT\") (or INTEGER, REAL, BLOB), and make Genre DatabaseValueConvertible",
                line: 4, column: 16, fixIt: "add @Column(type: \"TEXT\")", fixed: """
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @Column(type: "TEXT") var genre: Genre
            }
            """)
    }

    @Test func aLetWithAValueWithAFixIt() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                let kind: String = "a"
            }
            """, "'kind' is a 'let' with an initial value, so a row cannot set it; make it 'var', or mark it @Ignored", line: 4, column: 5,
                fixIt: "make it 'var'", fixed: """
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var kind: String = "a"
            }
            """)
    }

    @Test func anIgnoredPropertyWithoutAValue() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @Ignored var scratch: String
            }
            """, "@Ignored 'scratch' needs an initial value: records read from the database get it", line: 4, column: 5)
    }

    @Test func aSealedPrimaryKey() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey @Sealed var id: Int64
            }
            """, "'id' is the primary key, which sealed values are bound to: it cannot be sealed itself", line: 2, column: 8)
    }

    @Test func aRandomizedSealedColumnWithoutAPrimaryKey() {
        refuses("""
            @Table
            struct T {
                @Sealed var phone: String
            }
            """, "'phone' is sealed randomized, which binds each value to its row's primary key; declare a @PrimaryKey, or seal it .deterministic", line: 2, column: 8)
    }

    @Test func argumentsMustBeLiterals() {
        refuses("""
            @Table(tableName)
            struct T {
                @PrimaryKey var id: Int64
            }
            """, "@Table reads 'the table's name' when it compiles: write it as a literal", line: 1, column: 8)
    }

    @Test func keysMustNameColumns() {
        refuses("""
            @Table(primaryKey: ["a", "b"])
            struct T {
                var a: Int
            }
            """, "@Table(primaryKey:/unique:) names 'b', which is no column of this table", line: 1, column: 20)
    }

    /// Review finding: string arguments are read as their values, escapes resolved.
    @Test func escapedStringArgumentsAreTheirValues() {
        expand(#"""
            @Table("odd\"table")
            struct T {
                @PrimaryKey @Column("a\"b") var a: Int64
                @Column(default: "'c:\\dir'") var path: String
            }
            """#, #"""
            struct T {
                var a: Int64
                var path: String
            }

            extension T: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "odd\"table"

                static let databaseColumnNames: [String] = ["a\"b", "path"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.a = try row.decode(at: 0)
                    self.path = try row.decode(at: 1)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.a, at: 0)
                    try binder.bind(self.path, at: 1)
                }

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "odd\"table",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("a\"b", type: "INTEGER", notNull: true),
                        StrongroomMigrations.ColumnDefinition("path", type: "TEXT", notNull: true, defaultSQL: "'c:\\dir'"),
                    ],
                    primaryKey: ["a\"b"]
                )
            }
            """#)
    }

    /// Review finding: a default on a sealed column would be stored as plaintext.
    @Test func aSealedColumnWithADefault() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @Sealed @Column(default: "'none'") var phone: String
            }
            """, "'phone' is sealed, so a default would be stored as plaintext by any INSERT that omits it; drop the default", line: 4, column: 30)
    }
}

/// Issue 36, item 9: a sealed column is declared BLOB, whatever the
/// property's type; a type given with `@Column(type:)` is not used, and
/// says so (a warning: the table is still written).
extension TableMacroExpansionTests {
    @Test func aSealedColumnIsBlobAndATypeGivenIsNotUsed() {
        expand("""
            @Table("t")
            struct T {
                @PrimaryKey var id: Int64
                @Sealed @Column(type: "TEXT") var tier: Tier
                @Sealed(.deterministic) @Column(type: "blob") var code: Code
            }
            """, """
            struct T {
                var id: Int64
                var tier: Tier
                var code: Code
            }

            extension T: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "t"

                static let databaseColumnNames: [String] = ["id", "tier", "code"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.id = try row.decode(at: 0)
                    self.tier = try row.decode(at: 1)
                    self.code = try row.decode(at: 2)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.id, at: 0)
                    try binder.bind(self.tier, at: 1)
                    try binder.bind(self.code, at: 2)
                }

                static let databaseSealedColumns: [String] = ["tier", "code"]

                static let databaseRowKey: [String] = ["id"]

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "t",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("id", type: "INTEGER", notNull: true),
                        StrongroomMigrations.ColumnDefinition("tier", type: "BLOB", notNull: true, sealing: .randomized),
                        StrongroomMigrations.ColumnDefinition("code", type: "BLOB", notNull: true, sealing: .deterministic),
                    ],
                    primaryKey: ["id"]
                )
            }
            """, diagnostics: [DiagnosticSpec(message: "'tier' is sealed, so its column holds BLOB envelopes and is declared BLOB; type \"TEXT\" is not used: remove it",
                                              line: 4, column: 27, severity: .warning)])
    }
}

/// Issue 25, item 5: each form a stored property takes in Swift, and what
/// `@Table` makes of it.
extension TableMacroExpansionTests {
    /// Several names in one declaration, `let` without a value, observers,
    /// names that need quoting are columns; computed, `static` and `lazy`
    /// properties, and what `#if` holds that is no stored property, are not.
    @Test func theFormsThatAreColumnsAndTheFormsThatAreNot() {
        expand("""
            @Table
            struct Event {
                @PrimaryKey var id: Int64
                var first, last: String
                let created: Date
                var level: Int = 0 { didSet { print(level) } }
                var label: String { get { first } set { first = newValue } }
                static let kind = "event"
                lazy var summary: String = first + last
                var `default`: String?
                var order: Int
                #if DEBUG
                var debugName: String { "event" }
                static var count = 0
                @Ignored var scratch: String = ""
                func describe() -> String { first }
                #endif
            }
            """, """
            struct Event {
                var id: Int64
                var first, last: String
                let created: Date
                var level: Int = 0 { didSet { print(level) } }
                var label: String { get { first } set { first = newValue } }
                static let kind = "event"
                lazy var summary: String = first + last
                var `default`: String?
                var order: Int
                #if DEBUG
                var debugName: String { "event" }
                static var count = 0
                var scratch: String = ""
                func describe() -> String { first }
                #endif
            }

            extension Event: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "event"

                static let databaseColumnNames: [String] = ["id", "first", "last", "created", "level", "default", "order"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.id = try row.decode(at: 0)
                    self.first = try row.decode(at: 1)
                    self.last = try row.decode(at: 2)
                    self.created = try row.decode(at: 3)
                    self.level = try row.decode(at: 4)
                    self.`default` = try row.decode(at: 5)
                    self.order = try row.decode(at: 6)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.id, at: 0)
                    try binder.bind(self.first, at: 1)
                    try binder.bind(self.last, at: 2)
                    try binder.bind(self.created, at: 3)
                    try binder.bind(self.level, at: 4)
                    try binder.bind(self.`default`, at: 5)
                    try binder.bind(self.order, at: 6)
                }

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "event",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("id", type: "INTEGER", notNull: true),
                        StrongroomMigrations.ColumnDefinition("first", type: "TEXT", notNull: true),
                        StrongroomMigrations.ColumnDefinition("last", type: "TEXT", notNull: true),
                        StrongroomMigrations.ColumnDefinition("created", type: "TEXT", notNull: true),
                        StrongroomMigrations.ColumnDefinition("level", type: "INTEGER", notNull: true),
                        StrongroomMigrations.ColumnDefinition("default", type: "TEXT"),
                        StrongroomMigrations.ColumnDefinition("order", type: "INTEGER", notNull: true),
                    ],
                    primaryKey: ["id"]
                )
            }
            """)
    }

    /// A stored property inside `#if` was left out of the table without a
    /// word: neither stored nor read back.
    @Test func aStoredPropertyInsideIfConfig() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                #if DEBUG
                var trace: String
                #endif
            }
            """, "'trace' is a stored property inside #if, whose condition @Table cannot evaluate; declare it outside the #if (optional, if some builds have no value for it), or declare a type of its own for each configuration",
                line: 5, column: 9)
    }

    /// A sealed property inside `#if`, in each branch and nested: each is refused.
    @Test func aSealedPropertyInsideIfConfig() {
        let source = """
            @Table
            struct T {
                @PrimaryKey var id: Int64
                #if os(Linux)
                @Sealed var phone: String?
                #else
                #if DEBUG
                var phone: String?
                #endif
                #endif
            }
            """
        let message = "'phone' is a stored property inside #if, whose condition @Table cannot evaluate; declare it outside the #if (optional, if some builds have no value for it), or declare a type of its own for each configuration"
        expand(source, Self.stripped(source), diagnostics: [
            DiagnosticSpec(message: message, line: 5, column: 17),
            DiagnosticSpec(message: message, line: 8, column: 9),
        ])
    }

    /// An attribute inside `#if` (`#if X @Sealed #endif var phone`) was
    /// ignored: the property was stored as plaintext.
    @Test func anAttributeInsideIfConfig() {
        let source = """
            @Table
            struct T {
                @PrimaryKey var id: Int64
                #if os(Linux)
                @Sealed
                #endif
                var phone: String?
            }
            """
        expand(source, Self.stripped(source), diagnostics: [
            DiagnosticSpec(message: "'phone' has attributes inside #if, whose condition @Table cannot evaluate; write its attributes outside the #if", line: 4, column: 5),
        ])
    }

    /// A property wrapper's storage is the wrapper, not the value a row holds.
    @Test func aPropertyWrapper() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                @Clamped var level: Int
            }
            """, "'level' is wrapped by @Clamped, which @Table cannot read or write through; mark it @Ignored, or store the value in a plain property",
                line: 4, column: 5)
    }

    /// One NULL cannot tell `nil` from `.some(nil)`.
    @Test func aNestedOptional() {
        let source = """
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var nickname: String??
                var alias: Optional<String?>
            }
            """
        expand(source, Self.stripped(source), diagnostics: [
            DiagnosticSpec(message: "'nickname' has type 'String??', a nested optional, which one column cannot hold (NULL cannot tell nil from .some(nil)); make it 'String?'",
                           line: 4, column: 19),
            DiagnosticSpec(message: "'alias' has type 'Optional<String?>', a nested optional, which one column cannot hold (NULL cannot tell nil from .some(nil)); make it 'String?'",
                           line: 5, column: 16),
        ])
    }

    /// A tuple pattern declares several properties that no one name reads.
    @Test func aTuplePattern() {
        refuses("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var (x, y): (Int, Int)
            }
            """, "'(x, y)' declares several properties in one pattern, which @Table cannot take apart; declare each on its own ('var x: Int')",
                line: 4, column: 9)
    }

    /// Every spelling of an optional is a nullable column.
    @Test func everySpellingOfAnOptional() {
        expand("""
            @Table
            struct T {
                @PrimaryKey var id: Int64
                var a: String!
                var b: Optional<Int>
                var c: Swift.Optional<Double>
            }
            """, """
            struct T {
                var id: Int64
                var a: String!
                var b: Optional<Int>
                var c: Swift.Optional<Double>
            }

            extension T: Strongroom.TableRecord, StrongroomMigrations.TableModel {
                static let databaseTableName = "t"

                static let databaseColumnNames: [String] = ["id", "a", "b", "c"]

                init(row: borrowing Strongroom.RowView) throws(Strongroom.StrongroomError) {
                    self.id = try row.decode(at: 0)
                    self.a = try row.decode(at: 1)
                    self.b = try row.decode(at: 2)
                    self.c = try row.decode(at: 3)
                }

                func encode(to binder: inout Strongroom.RecordBinder) throws(Strongroom.StrongroomError) {
                    try binder.bind(self.id, at: 0)
                    try binder.bind(self.a, at: 1)
                    try binder.bind(self.b, at: 2)
                    try binder.bind(self.c, at: 3)
                }

                static let tableDefinition = StrongroomMigrations.TableDefinition(
                    "t",
                    columns: [
                        StrongroomMigrations.ColumnDefinition("id", type: "INTEGER", notNull: true),
                        StrongroomMigrations.ColumnDefinition("a", type: "TEXT"),
                        StrongroomMigrations.ColumnDefinition("b", type: "INTEGER"),
                        StrongroomMigrations.ColumnDefinition("c", type: "REAL"),
                    ],
                    primaryKey: ["id"]
                )
            }
            """)
    }
}
