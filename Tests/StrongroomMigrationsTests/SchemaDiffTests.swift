import Foundation
import Strongroom
import StrongroomFields
@testable import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// The next migration written from the model (issue 10, item 3): a run of
/// model changes, each written as a migration, applied to a filled
/// encrypted database and validated against the model with no row lost;
/// the lint; renames kept as renames.
@Suite("Migrations written from the model")
struct SchemaDiffTests {
    let f = MigrationFixture()
    let keyring = FieldKeyring.generate()
    /// Every statement the runner ran on the database, to replay on a newer SQLite.
    let trace = TracedStatements()

    static let initial = """
        CREATE TABLE artist(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE album(id INTEGER PRIMARY KEY, artist_id INTEGER NOT NULL REFERENCES artist(id), title TEXT NOT NULL);
        CREATE TABLE track(id INTEGER PRIMARY KEY, album_id INTEGER REFERENCES album(id), name TEXT NOT NULL, composer TEXT,
                           milliseconds INTEGER NOT NULL, price NUMERIC);
        """

    static let composers = (1...50).map { $0 % 7 == 0 ? nil : "Composer \($0)" }

    /// Version 1 by hand, applied to an encrypted database, then filled.
    func start() throws {
        f.write("0001_initial.sql", Self.initial)
        let db = try open()
        db.traceStatements { [trace] in trace.list.append($0) }
        try f.migrator().migrate(db)
        try db.inTransaction { db in
            for a in 1...3 { try db.execute(sql: "INSERT INTO artist VALUES (?, ?)", arguments: [a, "Artist \(a)"]) }
            for b in 1...4 { try db.execute(sql: "INSERT INTO album VALUES (?, ?, ?)", arguments: [b, (b % 3) + 1, "Album \(b)"]) }
            for t in 1...50 {
                try db.execute(sql: "INSERT INTO track VALUES (?, ?, ?, ?, ?, ?)",
                               arguments: [t, (t % 4) + 1, "Track \(t)", Self.composers[t - 1], t * 1000, Double(t) / 4])
            }
        }
    }

    func open(sealing model: DatabaseSchema? = nil) throws -> Connection {
        var configuration = Configuration(key: f.key)
        if let model { configuration.seal(model, keyring: keyring) } else { configuration.addFieldFunctionsForTools(keyring: keyring) }
        return try Connection(path: f.databasePath, configuration: configuration)
    }

    /// Writes the migration from what the migrations give to `model`,
    /// applies it to the filled database, and checks it reached the model
    /// without losing a row.
    @discardableResult
    func step(_ version: Int, _ model: DatabaseSchema, renames: [SchemaDiff.Rename] = [], destructive: Bool = false,
              sourceLocation: SourceLocation = #_sourceLocation) throws -> SchemaDiff {
        let plan = SchemaDiff.plan(from: try f.migrator().replayedSchema(), to: model, renames: renames)
        #expect(!plan.steps.isEmpty, "step \(version) changes nothing", sourceLocation: sourceLocation)
        #expect(plan.destructiveSteps.isEmpty == !destructive, "step \(version): \(plan.destructiveSteps.map { $0.destructive ?? "" })", sourceLocation: sourceLocation)
        f.write(String(format: "%04d_step.sql", version), plan.sql)
        let db = try open()
        let counts = try ["artist", "album", "track"].map { try f.count(db, $0) }
        db.traceStatements { [trace] in trace.list.append($0) }
        try f.migrator().migrate(db)
        db.traceStatements(nil)
        try model.validate(db)
        #expect(try ["artist", "album", "track"].map { try f.count(db, $0) } == counts, "step \(version) lost rows", sourceLocation: sourceLocation)
        #expect(model.differences(from: try f.migrator().replayedSchema()) == [], sourceLocation: sourceLocation)
        return plan
    }

    func changing(_ model: DatabaseSchema, _ table: String, _ change: (inout TableDefinition) -> Void) -> DatabaseSchema {
        var tables = model.tables
        let index = tables.firstIndex { $0.name == table }!
        change(&tables[index])
        return DatabaseSchema(tables: tables)
    }

    @Test func thirteenModelChangesEachAppliedToAFilledEncryptedDatabase() throws {
        try start()
        var model = try DatabaseSchema.read(sql: Self.initial)
        #expect(model.differences(from: try f.migrator().replayedSchema()) == [])

        // 2. A nullable column: ADD COLUMN.
        model = changing(model, "track") { $0.columns.append(ColumnDefinition("bytes", type: "INTEGER")) }
        #expect(try step(2, model).steps.map(\.sql) == [#"ALTER TABLE "track" ADD COLUMN "bytes" INTEGER"#])
        // 3. NOT NULL with a default: ADD COLUMN.
        model = changing(model, "artist") { $0.columns.append(ColumnDefinition("country", type: "TEXT", notNull: true, defaultSQL: "'UK'")) }
        #expect(try step(3, model).steps.map(\.sql) == [#"ALTER TABLE "artist" ADD COLUMN "country" TEXT NOT NULL DEFAULT 'UK'"#])
        // 4. An index.
        model = changing(model, "track") { $0.indexes.append(IndexDefinition("track_name", columns: ["name"])) }
        #expect(try step(4, model).steps.map(\.sql) == [#"CREATE INDEX "track_name" ON "track" ("name")"#])
        // 5. A new table, and a column referencing it.
        var tables = model.tables
        tables.append(TableDefinition("genre", columns: [ColumnDefinition("id", type: "INTEGER", notNull: true), ColumnDefinition("name", type: "TEXT", notNull: true)],
                                      primaryKey: ["id"], uniqueKeys: [["name"]]))
        model = changing(DatabaseSchema(tables: tables), "track") { track in
            track.columns.append(ColumnDefinition("genre_id", type: "INTEGER"))
            track.foreignKeys.append(ForeignKeyDefinition(["genre_id"], references: "genre", columns: ["id"], onDelete: .setNull))
        }
        let five = try step(5, model)
        #expect(five.steps.count == 2 && five.steps[1].sql.contains("ADD COLUMN \"genre_id\" INTEGER REFERENCES \"genre\" (\"id\") ON DELETE SET NULL"))
        // 6. A UNIQUE constraint: a rebuild.
        model = changing(model, "album") { $0.uniqueKeys.append(["artist_id", "title"]) }
        #expect(try step(6, model).steps.first?.sql.hasPrefix("-- strongroom: rebuild\nCREATE TABLE \"album\"") == true)
        // 7. A default changed: a rebuild.
        model = changing(model, "track") { $0.columns[3].defaultSQL = "'unknown'" }
        #expect(try step(7, model).steps.count == 1)
        // 8. A foreign key's action changed: a rebuild.
        model = changing(model, "album") { $0.foreignKeys[0].onDelete = .cascade }
        try step(8, model)
        // 9. An index replaced by another.
        model = changing(model, "track") { $0.indexes = [IndexDefinition("track_album_name", columns: ["album_id", "name"])] }
        #expect(try step(9, model).steps.map(\.sql) == [#"DROP INDEX "track_name""#, #"CREATE INDEX "track_album_name" ON "track" ("album_id", "name")"#])
        // 10. A column renamed, with the hint: a rename, not a drop and an add.
        model = changing(model, "track") { $0.columns[4].name = "duration_ms" }
        #expect(SchemaDiff.plan(from: try f.migrator().replayedSchema(), to: model).destructiveSteps.count == 1, "without the hint it would drop the column")
        #expect(try step(10, model, renames: [.column(table: "track", from: "milliseconds", to: "duration_ms")]).steps.map(\.sql)
                == [#"ALTER TABLE "track" RENAME COLUMN "milliseconds" TO "duration_ms""#])
        #expect(try open().fetchOne(Int.self, sql: "SELECT sum(duration_ms) FROM track") == (1...50).reduce(0, +) * 1000)
        // 11. A table renamed, with the hint (its foreign keys follow).
        tables = model.tables
        let genre = tables.firstIndex { $0.name == "genre" }!
        tables[genre].name = "style"
        model = changing(DatabaseSchema(tables: tables), "track") { $0.foreignKeys[$0.foreignKeys.firstIndex { $0.table == "genre" }!].table = "style" }
        // SQLite 3.15 leaves track's REFERENCES genre as it is (foreign keys
        // are off while migrating): track is rebuilt to reference style.
        let eleven = try step(11, model, renames: [.table(from: "genre", to: "style")])
        #expect(eleven.steps.map(\.sql) == [#"ALTER TABLE "genre" RENAME TO "style""#, "-- strongroom: rebuild\n" + model.table("track")!.createTableSQL])
        // 12. A plaintext column sealed (randomized), through the SQL functions.
        model = changing(model, "track") { $0.columns[3].sealing = .randomized }
        let twelve = try step(12, model)
        #expect(twelve.sql.contains("strongroom_seal(\"composer\", 'track', 'composer', 'randomized', \"id\")"))
        // 13. Another sealed indexed, with its blind index column.
        model = changing(model, "artist") { artist in
            artist.columns[1].sealing = .indexed
            artist.columns[1].sealedIndexColumn = "name_index"
            artist.columns.append(ColumnDefinition("name_index", type: "BLOB"))
            artist.indexes.append(IndexDefinition("artist_name_index", columns: ["name_index"]))
        }
        try step(13, model)
        // 14. A column dropped, allowed.
        model = changing(model, "track") { $0.columns.removeAll { $0.name == "bytes" } }
        let fourteen = try step(14, model, destructive: true)
        #expect(fourteen.sql.contains("-- DESTRUCTIVE: drops column track.bytes and its values\n-- strongroom: rebuild"))

        // The sealed values open to what was written, and lookups by blind index work.
        let db = try open(sealing: model)
        #expect(try db.fetchAll(sql: "SELECT id, composer FROM track ORDER BY id", opening: [SealedProperty("composer", of: "track")]).map { try $0.decode(String?.self, at: 1) } == Self.composers)
        struct ArtistName: Codable, SealedRecord {
            var id: Int64
            var name: String
            static let sealedProperties = [SealedProperty("name", of: "artist")]
        }
        #expect(try db.fetchOne(ArtistName.self, where: .index("name_index", equals: "Artist 2"))?.id == 2)
        #expect(try db.fetchAll(sql: "SELECT id, name FROM artist ORDER BY id", opening: [SealedProperty("name", of: "artist")]).map { try $0.decode(String.self, at: 1) } == ["Artist 1", "Artist 2", "Artist 3"])
        try replayOnNewerSQLite(model)
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM track ORDER BY id") == (1...50).map { "Track \($0)" })
    }

    /// The same statements on SQLite 3.26 or later (SQLCipher 4), which
    /// re-checks the schema on every rename: they run, and give the model.
    /// (The sealing updates call functions only Strongroom has: they are left out.)
    func replayOnNewerSQLite(_ model: DatabaseSchema) throws {
        let statements = trace.list.filter { !$0.contains("strongroom_seal(") && !$0.contains("strongroom_blind_index(") }
        let path = f.dir.file("replay.sqlite")
        let results = try NewerSQLite.replay([NewerSQLite.Job(path: path, statements: statements, then: "")])
        #expect(results[0].error == nil, "SQLite \(results[0].sqlite_version): \(results[0].error ?? "") at `\(results[0].statement ?? "")`")
        let replayed = try Connection(path: path, configuration: .plaintext)
        #expect(model.differences(from: try DatabaseSchema.read(from: replayed)) == [])
    }

    @Test func theLintNamesEachDataLosingStep() throws {
        let base = try DatabaseSchema.read(sql: Self.initial + "ALTER TABLE track ADD COLUMN note TEXT;")
        func losses(_ model: DatabaseSchema) -> [String] { SchemaDiff.plan(from: base, to: model).destructiveSteps.compactMap(\.destructive) }
        #expect(losses(DatabaseSchema(tables: base.tables.filter { $0.name != "track" })) == ["drops table track and its rows"])
        #expect(losses(changing(base, "track") { $0.columns.removeAll { $0.name == "composer" } }) == ["drops column track.composer and its values"])
        #expect(losses(changing(base, "track") { $0.columns.append(ColumnDefinition("isrc", type: "TEXT", notNull: true)) })
                == ["adds track.isrc NOT NULL without a default: the migration fails on a table with rows"])
        #expect(losses(changing(base, "track") { $0.columns[5].type = "INTEGER" }) == ["narrows track.price from NUMERIC to INTEGER: values that do not fit are changed"])
        #expect(losses(changing(base, "track") { $0.columns[6].type = "REAL" }) == ["narrows track.note from TEXT to REAL: values that do not fit are changed"])
        #expect(losses(changing(base, "track") { $0.columns[3].notNull = true }) == ["makes track.composer NOT NULL: the migration fails on a row where it is NULL"])
        let sealed = changing(base, "track") { $0.columns[3].sealing = .randomized }
        #expect(SchemaDiff.plan(from: sealed, to: base).destructiveSteps.compactMap(\.destructive) == ["opens track.composer: its values are stored as plaintext"])
        // Widening loses nothing: INTEGER to NUMERIC, anything to BLOB, a new nullable column.
        #expect(losses(changing(base, "track") { $0.columns[4].type = "NUMERIC" }) == [])
        #expect(losses(changing(base, "track") { $0.columns[6].type = "BLOB" }) == [])
    }

    @Test func theModelFileIsNotAMigration() throws {
        f.write("0001_initial.sql", Self.initial)
        f.write("schema.sql", try DatabaseSchema.read(sql: Self.initial).sql)
        #expect(try f.migrator().migrations.map(\.version) == [1])
        try DatabaseSchema.read(sql: Self.initial).checkSchemaFile(at: f.migrationsPath + "/schema.sql")
        let changed = changing(try DatabaseSchema.read(sql: Self.initial), "track") { $0.columns.append(ColumnDefinition("isrc", type: "TEXT")) }
        let stale = #expect(throws: SchemaMismatch.self) { try changed.checkSchemaFile(at: f.migrationsPath + "/schema.sql") }
        #expect(stale?.description.contains("regenerate it") == true)
        #expect(stale?.differences == [.missingColumn(table: "track", column: "isrc")])
    }

    /// Issue 25, item 9: the model moves an indexed column's blind index to
    /// another column: the diff fills the new one, so lookups still find rows.
    @Test func aBlindIndexMovedToAnotherColumnIsFilled() throws {
        func model(_ indexColumn: String) -> DatabaseSchema {
            DatabaseSchema(tables: [TableDefinition("person", columns: [
                ColumnDefinition("id", type: "INTEGER", notNull: true),
                ColumnDefinition("email", type: "BLOB", sealing: .indexed, sealedIndexColumn: indexColumn),
                ColumnDefinition(indexColumn, type: "BLOB"),
            ], primaryKey: ["id"], indexes: [IndexDefinition("person_\(indexColumn)", columns: [indexColumn])])])
        }
        var configuration = Configuration.plaintext
        configuration.addFieldFunctionsForTools(keyring: keyring)
        let db = try Connection.inMemory(configuration: configuration)
        try db.execute(sql: model("email_index").sql)
        try db.execute(sql: "INSERT INTO person VALUES (1, strongroom_seal('ada@example.com', 'person', 'email', 'indexed', 1), strongroom_blind_index('ada@example.com', 'person', 'email'))")
        let plan = SchemaDiff.plan(from: try DatabaseSchema.read(from: db), to: model("email_lookup"))
        #expect(plan.refusals.isEmpty, "\(plan.refusals)")
        try Migrator(migrations: [Migration(version: 1, description: "move blind index", sql: plan.sql)]).migrate(db)
        #expect(try db.fetchOne(Int.self, sql: "SELECT id FROM person WHERE email_lookup = strongroom_blind_index('ada@example.com', 'person', 'email')") == 1,
                "\(plan.sql)")
    }
}
