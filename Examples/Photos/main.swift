// A sqlite3 C API photos program (typed column reads, blobs, prepared
// inserts, updates, deletes), ported to Strongroom on an encrypted database.
// Each step names the C call it replaces; the guide "Coming from FMDB and
// sqlite3" has the whole mapping.
//
// Usage: photos DIRECTORY   (creates DIRECTORY/Keys/photos.key and DIRECTORY/photos.db)
import Foundation
import Strongroom

let directory = CommandLine.arguments.dropFirst().first ?? "."
let keyPath = directory + "/Keys/photos.key"

do {
    // sqlite3_open_v2 + sqlite3_key: the key is checked at open.
    if !FileManager.default.fileExists(atPath: keyPath) {
        try KeyFile.write(.generate(), to: keyPath)
    }
    let db = try Connection(path: directory + "/photos.db",
                            configuration: Configuration(key: try DatabaseKey.load(keyFile: keyPath)))
    defer { db.close() }                                          // sqlite3_close_v2

    // sqlite3_exec: several statements in one call.
    try db.execute(sql: """
        DROP TABLE IF EXISTS photo;
        CREATE TABLE photo(id INTEGER PRIMARY KEY, name TEXT NOT NULL, width INTEGER, height INTEGER,
                           rating REAL, thumbnail BLOB)
        """)

    // sqlite3_prepare_v2 once, then bind / step / reset for every row, in a
    // transaction (BEGIN … COMMIT, rolled back if anything throws).
    let photos: [(String, Int, Int, Double?, [UInt8])] = [
        ("harbour.jpg", 4032, 3024, 4.5, [0xFF, 0xD8, 0xFF, 0xE0]),
        ("snow.png", 1920, 1080, nil, [0x89, 0x50, 0x4E, 0x47]),
        ("portrait.heic", 3024, 4032, 3.0, []),
    ]
    try db.inTransaction(.immediate) { db in
        let insert = try db.prepare(sql: "INSERT INTO photo(name, width, height, rating, thumbnail) VALUES (?, ?, ?, ?, ?)")
        for (name, width, height, rating, thumbnail) in photos {
            try insert.execute(name, width, height, rating, Data(thumbnail))   // bind + step + reset
        }
    }
    print("inserted \(photos.count) photos, last rowid \(db.lastInsertedRowID)")   // sqlite3_last_insert_rowid

    // sqlite3_step over rows with sqlite3_column_type, _int64, _double, _text, _blob.
    let select = try db.prepare(sql: "SELECT id, name, width * height AS pixels, rating, thumbnail FROM photo ORDER BY id")
    try select.forEachRow { row in
        let id = try row.decode(Int64.self, column: "id")
        let name = try row.decode(String.self, column: "name")
        let pixels = try row.decode(Int.self, column: "pixels")
        let rating = try row.decode(Double?.self, column: "rating")                // NULL → nil
        let thumbnail = try row.decode(Data.self, column: "thumbnail")             // an empty BLOB → empty Data
        let type: String
        switch row["rating"] {                                                     // sqlite3_column_type
        case .real?: type = "REAL"
        case .null?: type = "NULL"
        default: type = "other"
        }
        print("  \(id) \(name): \(pixels) pixels, rating \(rating.map { String($0) } ?? "none") (\(type)), thumbnail \(thumbnail.count) bytes")
    }

    // A cursor stops early without throwing (sqlite3_step until you stop, then sqlite3_reset).
    let cursor = try db.makeCursor(sql: "SELECT name FROM photo ORDER BY width DESC")
    if let widest = try cursor.next() { print("widest: \(try widest.decode(String.self, at: 0))") }

    // Update and delete with sqlite3_changes.
    try db.execute(sql: "UPDATE photo SET rating = ? WHERE rating IS NULL", arguments: [2.0])
    let rated = db.changesCount
    try db.execute(sql: "DELETE FROM photo WHERE length(thumbnail) = 0")
    print("rated \(rated), deleted \(db.changesCount); \(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM photo") ?? 0) left")
} catch {
    FileHandle.standardError.write(Data("photos: \(error)\n".utf8))
    exit(1)
}
