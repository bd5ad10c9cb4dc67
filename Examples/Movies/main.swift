// The FMDB movies tutorial (create, batch import in a transaction, query all
// and one, update, delete), ported to Strongroom on an encrypted database.
// Each step names the FMDB call it replaces; the guide "Coming from FMDB and
// sqlite3" has the whole mapping.
//
// Usage: movies DIRECTORY   (creates DIRECTORY/Keys/movies.key and DIRECTORY/movies.db)
import Foundation
import Strongroom

let directory = CommandLine.arguments.dropFirst().first ?? "."
let keyPath = directory + "/Keys/movies.key"

do {
    // FMDatabase(path:) + open, and FMDatabaseQueue: one queue, one key.
    if !FileManager.default.fileExists(atPath: keyPath) {
        try KeyFile.write(.generate(), to: keyPath)            // mode 0600, Keys/ made owner-only
    }
    let queue = try DatabaseQueue(path: directory + "/movies.db",
                                  configuration: Configuration(key: try DatabaseKey.load(keyFile: keyPath)))

    // executeUpdate: CREATE TABLE
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS movie(
                id INTEGER PRIMARY KEY, title TEXT NOT NULL, category TEXT, year INTEGER NOT NULL,
                url TEXT, watched INTEGER NOT NULL DEFAULT 0, likes INTEGER NOT NULL DEFAULT 0)
            """)
    }

    // The batch import: inTransaction { db, rollback in } with [Any] arguments,
    // as FMDB code passes them (nil is NULL).
    let imported: [[Any?]] = [
        ["Alien", "Science fiction", 1979, "https://www.imdb.com/title/tt0078748/"],
        ["Heat", "Crime", 1995, nil],
        ["Amélie", "Comedy", 2001, "https://www.imdb.com/title/tt0211915/"],
        ["Spirited Away", "Animation", 2001, nil],
        ["Arrival", "Science fiction", 2016, nil],
    ]
    try queue.inTransaction { db, rollback in
        try db.execute(sql: "DELETE FROM movie")
        for movie in imported {
            try db.execute(sql: "INSERT INTO movie(title, category, year, url) VALUES (?, ?, ?, ?)",
                           arguments: try StatementArguments(anyValues: movie))
        }
    }
    print("imported \(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM movie") ?? 0 }) movies")

    // executeQuery + while next + stringForColumn / intForColumn: rows decode
    // into a struct, one property per column.
    struct Movie: Codable {
        var id: Int64
        var title: String
        var category: String?
        var year: Int
        var url: String?
        var watched: Bool
        var likes: Int
    }
    let all = try queue.read { db in try db.fetchAll(Movie.self, sql: "SELECT * FROM movie ORDER BY year, title") }
    for movie in all {
        print("  \(movie.year) \(movie.title) (\(movie.category ?? "no category"))\(movie.url == nil ? "" : ", has a link")")
    }

    // Query one: executeQuery with an argument, then one next.
    let alienID = try queue.read { db in try db.fetchOne(Int64.self, sql: "SELECT id FROM movie WHERE title = ?", arguments: ["Alien"]) }
    guard let alienID else { throw StrongroomError(.notFound, "Alien was not imported.") }

    // Update: executeUpdate, then changes.
    let changed = try queue.write { db in
        try db.execute(sql: "UPDATE movie SET watched = 1, likes = likes + 1 WHERE id = ?", arguments: [alienID])
        return db.changesCount
    }
    let alien = try queue.read { db in try db.fetchOne(Movie.self, sql: "SELECT * FROM movie WHERE id = ?", arguments: [alienID]) }
    print("updated \(changed) movie: \(alien?.title ?? "?") watched \(alien?.watched == true ? "yes" : "no"), \(alien?.likes ?? 0) like")

    // Delete, then a change undone with the rollback flag instead of a throw.
    let deleted = try queue.write { db in
        try db.execute(sql: "DELETE FROM movie WHERE year < ?", arguments: [1990])
        return db.changesCount
    }
    try queue.inTransaction { db, rollback in
        try db.execute(sql: "DELETE FROM movie")
        rollback = true
    }
    let left = try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM movie") ?? 0 }
    print("deleted \(deleted) movie; \(left) left after a rolled-back DELETE")
    try queue.close()
} catch {
    FileHandle.standardError.write(Data("movies: \(error)\n".utf8))
    exit(1)
}
