import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// `Connection.update` on tables with no sealed column: the row is found by
/// the record's declared key, else the table's primary key.
@Suite("Updating records")
struct RecordUpdateTests {
    let dir = TemporaryDirectory()

    struct Artist: TableRecord, Equatable {
        var id: Int64
        var name: String
        static let databaseTableName = "artist"
        static let databaseColumnNames = ["id", "name"]
        init(id: Int64, name: String) { self.id = id; self.name = name }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); name = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(name, at: 1) }
    }

    func database() throws -> Connection {
        let db = try Connection(path: dir.file("artists.db"), configuration: Configuration(key: .generate()))
        try db.execute(sql: "CREATE TABLE artist(id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO artist VALUES (1, 'AC/DC'), (2, 'Accept')")
        return db
    }

    @Test func aRecordUpdatesItsRowByThePrimaryKey() throws {
        let db = try database()
        try db.update(Artist(id: 2, name: "Aerosmith"))
        #expect(try db.fetchAll(Artist.self) == [Artist(id: 1, name: "AC/DC"), Artist(id: 2, name: "Aerosmith")])
        let error = #expect(throws: StrongroomError.self) { try db.update(Artist(id: 3, name: "Alanis")) }
        #expect(error?.code == .notFound && error?.message.contains("id = 3") == true, "\(String(describing: error))")
    }

    /// The primary key is read again once the schema changes: after a
    /// rebuild that makes `name` the key, an update finds rows by name.
    @Test func anEncodableUpdatesByThePrimaryKeyOfTheSchemaItFinds() throws {
        let db = try database()
        struct Rename: Encodable { var id: Int64; var name: String }
        try db.update(Rename(id: 1, name: "AC-DC"), in: "artist")
        #expect(try db.fetchOne(String.self, sql: "SELECT name FROM artist WHERE id = 1") == "AC-DC")
        try db.execute(sql: """
            CREATE TABLE artist_new(name TEXT PRIMARY KEY, id INTEGER);
            INSERT INTO artist_new SELECT name, id FROM artist; DROP TABLE artist; ALTER TABLE artist_new RENAME TO artist;
            """)
        try db.update(Rename(id: 9, name: "Accept"), in: "artist")
        #expect(try db.fetchOne(Int64.self, sql: "SELECT id FROM artist WHERE name = 'Accept'") == 9)
        struct Only: Encodable { var name: String }
        let error = #expect(throws: StrongroomError.self) { try db.update(Only(name: "Accept"), in: "artist") }
        #expect(error?.code == .misuse && error?.message.contains("no column to update") == true, "\(String(describing: error))")
        // A key the record lacks is named.
        let missing = #expect(throws: StrongroomError.self) { try db.update(Rename(id: 1, name: "x"), in: "artist", rowKey: ["artist_id"]) }
        #expect(missing?.message.contains("artist_id") == true, "\(String(describing: missing))")
    }
}
