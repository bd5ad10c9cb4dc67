import Foundation
import Strongroom
import StrongroomMigrations
import StrongroomTestSupport

/// A migrations directory and an encrypted database in a temporary directory.
final class MigrationFixture {
    let dir = TemporaryDirectory()
    let key = DatabaseKey.generate()
    var migrationsPath: String { dir.file("Migrations") }
    var databasePath: String { dir.file("app.db") }

    init() {
        try? FileManager.default.createDirectory(atPath: migrationsPath, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ sql: String) {
        FileManager.default.createFile(atPath: migrationsPath + "/" + name, contents: Data(sql.utf8))
    }

    func remove(_ name: String) {
        try? FileManager.default.removeItem(atPath: migrationsPath + "/" + name)
    }

    func open() throws -> Connection {
        try Connection(path: databasePath, configuration: Configuration(key: key))
    }

    func migrator() throws -> Migrator {
        try Migrator(directory: migrationsPath)
    }

    func count(_ db: Connection, _ table: String) throws -> Int {
        try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table)") ?? -1
    }
}
