import Foundation
import Strongroom
@testable import StrongroomMigrations
import Testing

/// Inputs the fuzz targets (Fuzz/, `make fuzz`) found, each kept as the
/// test of its fix.
@Suite("Fuzz regressions: schemas")
struct FuzzRegressionTests {
    /// FuzzDDLParser: a column declared with a quoted type that holds a
    /// keyword. SQLite keeps the type dequoted (`Mixed Case`); the schema file
    /// wrote it bare, where CASE is a keyword: the file did not run ("near
    /// Case: syntax error"), so `strongroom diff` could not read it back.
    @Test func aQuotedTypeWithAKeywordIsQuotedInTheSchemaFile() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t([my col], `otr, eh`\"Mixed Case\");")
        let schema = try DatabaseSchema.read(from: db)
        #expect(schema.table("t")?.column("otr, eh")?.type == "Mixed Case")
        #expect(schema.sql.contains(#""otr, eh" "Mixed Case""#))
        #expect(try DatabaseSchema.read(sql: schema.sql) == schema)
        // Plain types stay as they were written.
        for type in ["NVARCHAR(40)", "NUMERIC(10, 2)", "UNSIGNED BIG INT", "DECIMAL(-1,+2)", "INTEGER"] {
            #expect(ColumnDefinition("c", type: type).sql() == "\"c\" " + type)
        }
        #expect(ColumnDefinition("c", type: "a\"b").sql() == #""c" "a""b""#)
    }

    /// FuzzDDLParser: `a"C+ode"` declares column a with the type C+ode,
    /// which written bare is no type ("near +: syntax error").
    @Test func aTypeOutsideSQLiteTypeGrammarIsQuotedInTheSchemaFile() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE \"Parent\"(\"Id\" INTEGE, a\"C+ode\" TEXT UNIQUE);")
        let schema = try DatabaseSchema.read(from: db)
        #expect(schema.table("Parent")?.column("a")?.type == "C+ode")
        #expect(try DatabaseSchema.read(sql: schema.sql) == schema)
        #expect(ColumnDefinition("c", type: "C+ode").sql() == #""c" "C+ode""#)
        #expect(ColumnDefinition("c", type: "DECIMAL(10)x").sql() == #""c" "DECIMAL(10)x""#)
        #expect(ColumnDefinition("c", type: "DECIMAL(10)").sql() == #""c" DECIMAL(10)"#)
    }

    /// FuzzDDLParser: a quoted type with spaces around it (`" INTE  "`),
    /// which SQLite keeps as written, read back without them.
    @Test func aTypeWithSpacesAroundItIsQuotedInTheSchemaFile() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE \"Genre\" (\n C\u{FFFD}nenreId\" INTE  \"LastName\" NVARCHAR(20) NOT NULL,\n  \"CHAR(119)\n);")
        let schema = try DatabaseSchema.read(from: db)
        #expect(schema.table("Genre")?.columns.map(\.type) == [" INTE  "])
        #expect(try DatabaseSchema.read(sql: schema.sql) == schema)
    }

    /// FuzzDDLParser: `DEFAULT <name>` is the name as a string to SQLite;
    /// the schema file put it in parentheses, where it is a column, and the
    /// file did not run ("default value of column [gone] is not constant").
    @Test func aNameAsADefaultStaysBareInTheSchemaFile() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(name TEXT N NULTOL CGLLATE nocase DEFAULT 'x', gone INTEGER NOT NULL DEFAULT \u{FFFD}8, n INTNGER DEFAULT (abs(-3)));")
        let schema = try DatabaseSchema.read(from: db)
        #expect(schema.table("t")?.column("gone")?.defaultSQL == "\u{FFFD}8")
        #expect(try DatabaseSchema.read(sql: schema.sql) == schema)
        #expect(TableDefinition.defaultClause("draft") == "draft")
        #expect(TableDefinition.defaultClause("\"draft\"") == "\"draft\"")
        #expect(TableDefinition.defaultClause("abs(-3)") == "(abs(-3))")
        #expect(TableDefinition.defaultClause("TRUE") == "1")
        // Written bare, SQLite stores the name as a string.
        try db.execute(sql: "CREATE TABLE u(a, b DEFAULT draft)")
        try db.execute(sql: "INSERT INTO u(a) VALUES (1)")
        #expect(try db.fetchOne(String.self, sql: "SELECT b FROM u") == "draft")
    }

    /// FuzzDDLParser: an item of a CREATE TABLE that ends with a `--`
    /// comment. The statement a rebuild writes put the comma after it, inside
    /// the comment: the next item joined this one (a column written comma
    /// first, `a INTEGER -- note` then `, b TEXT`, became part of a's type).
    @Test func anItemEndingWithACommentKeepsTheNextItemInARebuild() throws {
        let fuzzed = "CREATE TABLE a(id INTEid INTEGER PRIMARYGERXT6\n, -- the id\n  x TEXT,X  Ey \nTT  KEY, -- tTABLE a(id INTEid INTEGER PRIMARYGERXT6\n, -- the id\n  x TEXT,X  Ey X  Ey \nTT -- last column\n);"
        let definition = try #require(CreateTableDefinition(fuzzed))
        let again = try #require(CreateTableDefinition(definition.sql(named: "b")))
        #expect(again.items.map(\.text) == definition.items.map(\.text))

        let db = try Connection.inMemory()
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        try db.execute(sql: "CREATE TABLE t(\n  a INTEGER -- the key\n  , b TEXT -- a note\n  , c TEXT\n); INSERT INTO t VALUES (1, 'x', 'y')")
        try db.inTransaction { db in try TableRebuild.dropColumn(db, table: "t", column: "c") }
        let columns = try db.fetchAll(sql: "PRAGMA table_info(t)").map { try $0.decode(String.self, column: "name") }
        #expect(columns == ["a", "b"])
        #expect(try db.fetchOne(String.self, sql: "SELECT a || b FROM t") == "1x")
    }

    /// FuzzDDLParser: a join condition (`ON t('…`) whose parenthesis is not
    /// closed: the column reference finder read past the end of the
    /// statement's tokens and trapped (index out of range).
    @Test func aJoinConditionWithAnUnclosedParenthesisDoesNotTrap() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT)")
        let finder = ColumnReferenceFinder(table: "person", column: "name", catalog: try SchemaCatalog(db))
        let sql = "CREATE VIEW bv AS SELECT rid, size FROM blob WHEVE rREATE INDEX i1 ON t('aid > 0;"
        let found = try? finder.references(in: SchemaCatalog.Object(kind: .view, name: "bv", tableName: "bv", sql: sql))
        #expect(found == nil || found == [])
    }

    /// FuzzDDLParser: a compound SELECT whose last token is ORDER (no BY):
    /// the ORDER BY reader made the range of its terms from two tokens past
    /// ORDER, beyond the end of the statement, and trapped (Range requires
    /// lowerBound <= upperBound).
    @Test func aCompoundSelectEndingInOrderDoesNotTrap() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(a INTEGER); CREATE TABLE u(a INTEGER)")
        let finder = ColumnReferenceFinder(table: "u", column: "a", catalog: try SchemaCatalog(db))
        for sql in ["CREATE VIEW v AS SEL\0\0\0 t UNION SELECT a FROM u ORDER", "CREATE VIEW v AS SELECT a FROM t UNION SELECT a FROM u ORDER",
                    "CREATE VIEW v AS SELECT a FROM t UNION SELECT a FROM u ORDER BY"] {
            _ = try? finder.references(in: SchemaCatalog.Object(kind: .view, name: "v", tableName: "v", sql: sql))
        }
    }

    /// FuzzDDLParser: a compound SELECT whose last arm is empty (`… UNION
    /// ALL` at the end of the view): the finder read the arm's first token
    /// past the end of the statement's tokens and trapped.
    @Test func aCompoundSelectEndingInUnionAllDoesNotTrap() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(a INTEGER); CREATE TABLE u(a INTEGER)")
        let finder = ColumnReferenceFinder(table: "u", column: "a", catalog: try SchemaCatalog(db))
        for sql in ["CREATE VIEW v AS SELECT a FROM t UNION ALL ", "CREATE VIEW v AS SELECT a FROM t UNION ALL SELECT a FROM u UNION",
                    "CREATE VIEW v AS SELECT a FROM t UNION ALL ;"] {
            _ = try? finder.references(in: SchemaCatalog.Object(kind: .view, name: "v", tableName: "v", sql: sql))
        }
    }

    /// FuzzMigrationFile: a statement ends with `;` followed by a combining
    /// mark (U+0351), which Swift takes with the `;` for one Character: the
    /// statement was not found in the file by Character, and every later
    /// statement got the line of an earlier one in error messages.
    @Test func statementLinesAreFoundByteForByte() throws {
        let fuzzed = String(decoding: try #require(Data(base64Encoded: """
            LGUgOnosIHcgVkFMVUVTICgxLCAyLCAzKTsKSU5TRVJUIElOVE8gdDAgVkFMVUVTICg0LCA1LCA2KSwgKDcsOSA7LDgpIApERUxF
            VEUgRlJPTSB0MSBXSEVSRSBhID0gNDsKLS0gYWx0ZWVyLXJlbmFtZWQtdGFibGUKLS0gc291cmNlOiBzcXdpdGggLQEoYW5kIC8q
            ICovIGNvbW1lbnRzIGJldHdlZW4gdGhlIGNvbHVtbnMKLS0gbmF0aXYsZSA6eiwgdyBWQUxVRVMgKDEsIDIsIDMpOwpJTlNFUlQg
            SU5UTyB0MSBWQUxVRVMgKDQsIDUsIDYpLCAoNyw5IDvNkURFWERFTEVURSBGUk9NIHQxIFdIRVJFIGEgPSA0OwotLSBhbHRlZXIt
            cmVuYW1lZC10YWJsZQotLSBzb3VyY2U6IHNxbGl0ZSBhbHRlcnRhYjIudGVzdCA4LjAtOC4zCi0tIG5hdGl2ZTogZXJyb3I6IGVy
            cm9yIGluIHByaWdnZXIgdHIgYWZ0ZXIgcmVuYW1lOiABbyDmdWNoIGNvbHVtbjogYQotLSBzZXR1cApDUkVBVEUgVEFCTEUgdDAo
            YSwgYiwgYyk7CkNSRUFURSBUQUJMRSB0MihhLCBiLCBjKTsKQ1JFQVRFIFRBQkxFIHQgbzNsaXRlIGFsdGVydGFiMi50ZXN0IDgu
            MC04LjMKLS0gbmF0aXZlOiBlcnJvcjogZXJyb3IgaW4gcHJpZ2dlciB0ciBhZnRlciByZW5hbWU6IAFvIOZ1Y2ggY29sdW1uOiBh
            Ci0tIHNldHVwCkNSRUFURSBUQUJMRSB0MChhLCBiLCBjKTsKQ1JFQVRFIFRBQkxFIHQyKGEsIGIsIGMpOwpDUkVBVEUgVEFCTEUg
            dCBvM2sKLSg=
            """.replacingOccurrences(of: "\n", with: ""))), as: UTF8.self)
        let migration = Migration(version: 1, description: "fuzz", sql: fuzzed)
        #expect(migration.statementLines == [1, 2, 2, 7, 7, 12, 13, 14, 18, 19])
        // The first statement was taken for the same text further down.
        let readable = Migration(version: 1, description: "x", sql: "SELECT 1;\u{351}\nSELECT 1;")
        #expect(readable.statementLines == [1, 1])
    }

    /// FuzzDDLParser: DatabaseSchema.read on a connection that had read the
    /// schema of a table of the same name without a foreign key failed
    /// ("Row has no column named id; it has ."): its cached PRAGMA had no
    /// columns. (The cause, in Strongroom's statements, has its own test.)
    @Test func aSchemaReadAgainAfterATableGainedAForeignKeyHasTheKey() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t2(id INTEGER PRIMARY KEY); CREATE TABLE t1(a INTEGER, b INTEGER PRIMARY KEY)")
        #expect(try DatabaseSchema.read(from: db).table("t1")?.foreignKeys.isEmpty == true)
        try db.execute(sql: "DROP TABLE t1")
        try db.execute(sql: "CREATE TABLE t1(a INTEGER, b INTEGER PRIMARY KEY, c BLOB, FOREIGN KEY (b) REFERENCES t2);")
        let keys = try #require(try DatabaseSchema.read(from: db).table("t1")?.foreignKeys)
        #expect(keys.map(\.table) == ["t2"] && keys.map(\.columns) == [["b"]])
    }

    /// FuzzDDLParser: `PRIMARY KEY(c2 COLLATE rtrim), UNIQUE(c2)` makes two
    /// indexes (their collations differ), read as a primary key and a unique
    /// key on c2. The schema file, which has no collations, wrote
    /// `c2 TEXT PRIMARY KEY, UNIQUE (c2)`, where SQLite drops the UNIQUE as the
    /// primary key's own: the file read back without it, and a model that
    /// declares a unique key equal to its primary key never validated.
    @Test func aUniqueKeyEqualToThePrimaryKeyIsThePrimaryKeys() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: """
            CREATE TABLE t1(c1 INTEGER, c2 TEXT, PRIMARY KEY(c2 COLLATE rtrim), UNIQUE(c2));
            CREATE TABLE t2(a TEXT, b TEXT, UNIQUE(a COLLATE nocase), UNIQUE(A), UNIQUE(b, a), UNIQUE(a, b));
            """)
        let schema = try DatabaseSchema.read(from: db)
        #expect(schema.table("t1")?.primaryKey == ["c2"])
        #expect(schema.table("t1")?.uniqueKeys == [])
        #expect(schema.table("t2")?.uniqueKeys == [["a"], ["a", "b"], ["b", "a"]])
        #expect(try DatabaseSchema.read(sql: schema.sql) == schema)
        #expect(SchemaDiff.plan(from: schema, to: schema).steps.isEmpty)

        // A model may declare the primary key unique too: the live table,
        // made from the model's own SQL, has only the primary key's index.
        // (An INTEGER PRIMARY KEY is the rowid, with no index: there SQLite
        // makes the UNIQUE's.)
        let model = DatabaseSchema(tables: ["INTEGER", "TEXT"].enumerated().map { i, type in
            TableDefinition("m\(i)", columns: [ColumnDefinition("id", type: type), ColumnDefinition("x", type: "TEXT")],
                            primaryKey: ["id"], uniqueKeys: [["ID"], ["x"]])
        })
        try db.execute(sql: model.sql)
        let live = DatabaseSchema(tables: try DatabaseSchema.read(from: db).tables.filter { $0.name.hasPrefix("m") })
        #expect(model.differences(from: live) == [])
        #expect(SchemaDiff.plan(from: live, to: model).steps.isEmpty)

        // (Review) A key that differs from the primary key only by its
        // collation is the primary key to the model, which holds no
        // collations: a diff that would rebuild its table refuses, so the
        // constraint is never dropped by a rebuild.
        try db.execute(sql: "CREATE TABLE c(a TEXT PRIMARY KEY, b TEXT, UNIQUE(a COLLATE NOCASE))")
        let collated = try DatabaseSchema.read(from: db)
        let changed = DatabaseSchema(tables: collated.tables.map { table in
            guard table.name == "c" else { return table }
            var table = table
            table.columns.removeAll { $0.name == "b" }
            return table
        })
        let plan = SchemaDiff.plan(from: collated, to: changed)
        #expect(plan.refusals.contains { $0.contains("Rebuilding c") && $0.contains("COLLATE") })
    }

    /// Review of the schema file's types: a type written bare must be read
    /// back by SQLite as the same type. `A--B` written bare began a comment
    /// that swallowed the rest of the line (the column's NOT NULL, its primary
    /// key, the next column), with no error; `A/*B`, `NUMERIC(1.2.3)` and a
    /// vertical tab made files that did not run; `NOTHING` (a keyword from
    /// SQLite 3.24, for upserts) made a file that ran on 3.15 and nowhere newer.
    @Test func onlyATypeInSQLiteTypeGrammarIsWrittenBare() throws {
        let types = ["A--B", "A/*B", "NUMERIC(1.2.3)", "NUMERIC(1..2)", "A\u{0B}B", "A NOTHING", "A  B", "INT\u{A0}X", "É", "1A",
                     "NUMERIC(10, 2)", "DECIMAL(-1,+2)", "UNSIGNED BIG INT", "VARCHAR(40)", "REAL", "_t1"]
        for type in types {
            let db = try Connection.inMemory()
            try db.execute(sql: "CREATE TABLE t(id \(SQLScript.quotedIdentifier(type)) NOT NULL PRIMARY KEY DEFAULT 7, v TEXT)")
            let schema = try DatabaseSchema.read(from: db)
            #expect(schema.table("t")?.column("id")?.type == type)
            do {
                #expect(try DatabaseSchema.read(sql: schema.sql) == schema, "type \(type.debugDescription): \(schema.sql)")
            } catch {
                Issue.record("type \(type.debugDescription): the schema file does not run: \(error.message)")
            }
        }
        for type in ["A--B", "A/*B", "NUMERIC(1.2.3)", "NUMERIC(1..2)", "A\u{0B}B", "A NOTHING", "NOTHING", "É"] {
            #expect(ColumnDefinition("c", type: type).sql() == "\"c\" " + SQLScript.quotedIdentifier(type))
        }
        for type in ["NUMERIC(10, 2)", "DECIMAL(-1,+2)", "UNSIGNED BIG INT", "VARCHAR(40)", "REAL", "_t1", "NUMERIC(10.5)"] {
            #expect(ColumnDefinition("c", type: type).sql() == "\"c\" " + type)
        }
    }

    /// FuzzDDLParser: a type holding `"` followed by a combining mark
    /// (U+0487). Swift takes the two for one Character, so quoting by
    /// `replacingOccurrences(of: "\"", …)` did not double that quote: the
    /// schema file's quoted type ended early and the file did not run. The
    /// same held for every name Strongroom quotes (a table named so would
    /// have ended its quotes early in Strongroom's own statements), for
    /// '…' literals, and for dequoting `""` and `''` when reading SQL.
    @Test func aQuoteFollowedByACombiningMarkIsDoubled() throws {
        // (Literals built from scalars: #expect re-reads its source text,
        // and trips on the same quote.)
        let q = "\u{22}", mark = "\u{0487}", acute = "\u{0301}"
        let name = "t" + q + mark + "x", column = "c" + q + acute, type = "x" + q + mark + "y"
        let quotedName = SQLScript.quotedIdentifier(name), expectedName = q + "t" + q + q + mark + "x" + q
        #expect(quotedName == expectedName)
        let literal = DatabaseSchema.literal("a'" + acute + "b"), expectedLiteral = "'a''" + acute + "b'"
        #expect(literal == expectedLiteral)
        let identifier = SQLTokenizer.tokenize(expectedName).first?.identifier
        #expect(identifier == name)
        let string = SQLTokenizer.tokenize(expectedLiteral).first?.name, unquoted = "a'" + acute + "b"
        #expect(string == unquoted)
        // (Review) A name that starts with a combining mark: the opening
        // quote and the mark are one Character, so the quote style must be
        // told by the first scalar.
        for quote in [q, "`"] {
            let token = quote + mark + "a" + quote + quote + "b" + quote, expected = mark + "a" + quote + "b"
            let read = SQLTokenizer.tokenize(token).first?.identifier
            #expect(read == expected)
        }

        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE " + quotedName + "(" + SQLScript.quotedIdentifier(column) + " " + SQLScript.quotedIdentifier(type) + ", b TEXT)")
        let schema = try DatabaseSchema.read(from: db)
        let columns = schema.table(name)?.columns.map(\.name), expectedColumns = [column, "b"]
        #expect(columns == expectedColumns)
        let readType = schema.table(name)?.column(column)?.type
        #expect(readType == type)
        #expect(try DatabaseSchema.read(sql: schema.sql) == schema)
    }
}
