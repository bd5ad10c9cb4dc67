import Foundation
import Strongroom
@testable import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// The upgrade test helper for apps (issue 10, item 4): it passes an upgrade
/// that keeps every row and reaches the model, and fails each other way.
@Suite("Upgrade tests for apps")
struct UpgradeTestTests {
    static let v1 = Migration(version: 1, description: "initial", sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);")
    static let v2 = Migration(version: 2, description: "email", sql: "ALTER TABLE customer ADD COLUMN email TEXT; CREATE INDEX customer_name ON customer(name);")
    static let v3 = Migration(version: 3, description: "drop fax", sql: "ALTER TABLE customer DROP COLUMN fax;")

    static let model = try! DatabaseSchema.read(sql: """
        CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
        CREATE INDEX customer_name ON customer(name);
        """)

    static func fill(_ db: Connection) throws {
        for i in 1...20 { try db.execute(sql: "INSERT INTO customer(name, fax) VALUES (?, ?)", arguments: ["Customer \(i)", i % 2 == 0 ? "fax" : nil]) }
    }

    @Test func anUpgradeThatKeepsEveryRowAndReachesTheModelPasses() throws {
        let test = UpgradeTest(migrator: try Migrator(migrations: [Self.v1, Self.v2, Self.v3]), model: Self.model)
        for version in [1, 2] {
            let report = try test.run(from: version, fill: Self.fill, check: { db in
                let names = try db.fetchAll(String.self, sql: "SELECT name FROM customer ORDER BY id")
                #expect(names == (1...20).map { "Customer \($0)" })
            })
            #expect(report.fromVersion == version && report.toVersion == 3)
            #expect(report.rowCountsBefore["customer"] == 20 && report.rowCounts["customer"] == 20)
        }
    }

    /// Two tables whose names SQLite keeps apart and Swift's strings take
    /// for one (`Kept`, and KELVIN SIGN + `ept`): counting their rows by
    /// name stopped the process ("duplicate keys"); it is a failure that
    /// says so (review of cc077ff).
    @Test func tablesWhoseNamesSwiftCannotTellApartAreAFailureNotACrash() throws {
        let v1 = Migration(version: 1, description: "look-alikes", sql: "CREATE TABLE Kept(id INTEGER PRIMARY KEY); CREATE TABLE \u{212A}ept(id INTEGER PRIMARY KEY);")
        let model = try DatabaseSchema.read(sql: "CREATE TABLE Kept(id INTEGER PRIMARY KEY); CREATE TABLE \u{212A}ept(id INTEGER PRIMARY KEY);")
        let test = UpgradeTest(migrator: try Migrator(migrations: [v1]), model: model)
        let failure = #expect(throws: UpgradeTest.Failure.self) { try test.run(from: 1, fill: { _ in }) }
        #expect(failure?.code == "indistinct_names", "\(String(describing: failure))")
    }

    /// Rows lost from `Kept` are lost even when a table KELVIN SIGN + `ept`
    /// holds as many after (Swift's strings took it for `Kept`); a table
    /// rebuilt as `KEPT` lost nothing (review of 1032c81).
    @Test func rowsAreCountedByTableAsSQLiteNamesIt() throws {
        let v1 = Migration(version: 1, description: "kept", sql: "CREATE TABLE Kept(id INTEGER PRIMARY KEY);")
        let swap = Migration(version: 2, description: "swap", sql: "DROP TABLE Kept; CREATE TABLE \u{212A}ept(id INTEGER PRIMARY KEY); INSERT INTO \u{212A}ept VALUES (1), (2);")
        let lossy = UpgradeTest(migrator: try Migrator(migrations: [v1, swap]), model: try DatabaseSchema.read(sql: "CREATE TABLE \u{212A}ept(id INTEGER PRIMARY KEY);"))
        let failure = #expect(throws: UpgradeTest.Failure.self) { try lossy.run(from: 1, fill: { db in try db.execute(sql: "INSERT INTO Kept VALUES (1), (2)") }) }
        #expect(failure?.code == "lost_rows" && failure?.description.contains("Kept had 2, has 0 (dropped)") == true, "\(String(describing: failure))")

        let rebuild = Migration(version: 2, description: "rebuild", sql: "CREATE TABLE new_kept(id INTEGER PRIMARY KEY, note TEXT); INSERT INTO new_kept(id) SELECT id FROM Kept; DROP TABLE Kept; ALTER TABLE new_kept RENAME TO KEPT;")
        let kept = UpgradeTest(migrator: try Migrator(migrations: [v1, rebuild]), model: try DatabaseSchema.read(sql: "CREATE TABLE KEPT(id INTEGER PRIMARY KEY, note TEXT);"))
        try kept.run(from: 1, fill: { db in try db.execute(sql: "INSERT INTO Kept VALUES (1), (2)") })
    }

    @Test func anUpgradeThatDoesNotReachTheModelFails() throws {
        let test = UpgradeTest(migrator: try Migrator(migrations: [Self.v1, Self.v2]), model: Self.model)
        let mismatch = #expect(throws: SchemaMismatch.self) { try test.run(from: 1, fill: Self.fill) }
        #expect(mismatch?.differences == [.extraColumn(table: "customer", column: "fax")])
    }

    @Test func anUpgradeThatLosesRowsFails() throws {
        let purge = Migration(version: 4, description: "purge", sql: "DELETE FROM customer WHERE id > 10;")
        let test = UpgradeTest(migrator: try Migrator(migrations: [Self.v1, Self.v2, Self.v3, purge]), model: Self.model)
        let failure = #expect(throws: UpgradeTest.Failure.self) { try test.run(from: 2, fill: Self.fill) }
        #expect(failure?.code == "lost_rows")
        #expect(failure?.description.contains("customer had 20, has 10") == true)
    }

    @Test func anUpgradeThatEndsUnlikeANewDatabaseFails() throws {
        // A Swift migration that decides from the rows: an upgraded database
        // gets an index a new one never gets.
        let dataDependent = Migration(version: 4, description: "index when big") { db in
            if try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") ?? 0 > 0 {
                try db.execute(sql: "CREATE INDEX customer_email ON customer(email)")
                try db.execute(sql: "DROP INDEX customer_email")
                try db.execute(sql: "CREATE VIEW busy AS SELECT * FROM customer")
            }
        }
        let test = UpgradeTest(migrator: try Migrator(migrations: [Self.v1, Self.v2, Self.v3, dataDependent]), model: Self.model)
        let failure = #expect(throws: UpgradeTest.Failure.self) { try test.run(from: 1, fill: Self.fill) }
        #expect(failure?.code == "differs_from_new")
        #expect(failure?.description.contains("view busy") == true)
    }
}
