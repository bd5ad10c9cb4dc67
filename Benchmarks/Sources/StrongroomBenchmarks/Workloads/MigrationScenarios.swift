import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomMigrations

/// The migration runner against its baselines: a 1M-row table rebuild against
/// the stock `sqlcipher` shell running the same statements on a copy of the
/// same file, and a fleet of small files with 2 workers against 1.
enum MigrationScenarios {
    static let pragmas = """
        PRAGMA temp_store = MEMORY;
        PRAGMA cache_size = -65536;
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = NORMAL;
        """

    /// Seeds `path` with a `wide` table of `rows` rows, a child table and an index.
    static func seed(path: String, key: DatabaseKey, rows: Int) throws {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        try db.execute(sql: """
            CREATE TABLE wide(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, note TEXT, legacy TEXT);
            CREATE TABLE child(id INTEGER PRIMARY KEY, wide_id INTEGER NOT NULL REFERENCES wide(id) ON DELETE CASCADE);
            CREATE INDEX wide_name ON wide(name);
            """)
        try db.inTransaction(.immediate) { db in
            try db.execute(sql: """
                INSERT INTO wide(id, name, score, note, legacy)
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
                SELECT i, 'name-' || i, i * 0.5, 'note ' || (i % 1000), 'legacy value ' || i FROM n
                """)
            try db.execute(sql: "INSERT INTO child(wide_id) SELECT id FROM wide WHERE id % 10 = 0")
        }
        _ = try db.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Drops `wide.legacy` with the runner (a 12-step rebuild) and with the
    /// shell running the same statements, each on a fresh copy of the same
    /// file, `rounds` times, the order alternating; returns (runner, shell)
    /// seconds, every round. Both are timed from outside: ours opens the
    /// connection and migrates in this process, the shell's time includes
    /// starting its process (a few milliseconds against seconds).
    static func rebuild(directory: String, key: DatabaseKey, keyHex: String, rows: Int, rounds: Int) throws -> (Timing, Timing) {
        let seeded = "\(directory)/rebuild-seed.db"
        try seed(path: seeded, key: key, rows: rows)
        let migrations = "\(directory)/rebuild-migrations"
        try FileManager.default.createDirectory(atPath: migrations, withIntermediateDirectories: true)
        try Data("ALTER TABLE wide DROP COLUMN legacy;\n".utf8).write(to: URL(fileURLWithPath: "\(migrations)/0001_drop_legacy.sql"))
        let migrator = try Migrator(directory: migrations)

        let ours = "\(directory)/rebuild-ours.db", theirs = "\(directory)/rebuild-shell.db"
        var runner = Timing(), shell = Timing()
        for round in 0..<rounds {
            for path in [ours, theirs] {
                for suffix in ["", "-wal", "-shm", "-migrate.lock"] { unlink(path + suffix) }
                try FileManager.default.copyItem(atPath: seeded, toPath: path)
            }
            // Alternate which side goes first.
            let runOurs = {
                sync()
                runner.add(try seconds {
                    let db = try Connection(path: ours, configuration: Configuration(key: key))
                    try migrator.migrate(db)
                })
            }
            let runShell = {
                sync()
                shell.add(try seconds { try shellRebuild(path: theirs, keyHex: keyHex) })
            }
            if round % 2 == 0 { try runOurs(); try runShell() } else { try runShell(); try runOurs() }
            // Both must have kept every row and every child.
            for path in [ours, theirs] {
                let db = try Connection(path: path, configuration: Configuration(key: key))
                guard try db.fetchOne(Int.self, sql: "SELECT count(*) FROM wide") == rows,
                      try db.fetchOne(Int.self, sql: "SELECT count(*) FROM child") == rows / 10,
                      try db.fetchAll(sql: "PRAGMA table_info(wide)").count == 4 else {
                    throw BenchmarkError("the rebuild of \(path) lost rows or did not drop the column")
                }
            }
        }
        return (runner, shell)
    }

    /// The stock shell, key on standard input, the statements the runner runs.
    static func shellRebuild(path: String, keyHex: String) throws {
        let script = """
            PRAGMA key = "x'\(keyHex)'";
            \(pragmas)
            PRAGMA foreign_keys = OFF;
            BEGIN IMMEDIATE;
            CREATE TABLE "strongroom_new_wide" (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, note TEXT);
            INSERT INTO "strongroom_new_wide" (rowid, "id", "name", "score", "note") SELECT rowid, "id", "name", "score", "note" FROM "wide";
            DROP TABLE "wide";
            ALTER TABLE "strongroom_new_wide" RENAME TO "wide";
            CREATE INDEX wide_name ON wide(name);
            PRAGMA foreign_key_check;
            COMMIT;
            PRAGMA foreign_keys = ON;
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlcipher")
        process.arguments = [path]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(script.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("the sqlcipher shell failed") }
    }

    /// Migrates `count` small encrypted files with 1 worker, and a copy of
    /// them with 2; returns the (one worker, two workers) timings.
    /// `perTenantDirectory`: each file in a directory of its own
    /// (`tenant17/app.db`) rather than all in one directory.
    static func fleet(directory: String, key: DatabaseKey, count: Int, perTenantDirectory: Bool, rounds: Int) throws -> (Timing, Timing) {
        let migrations = "\(directory)/fleet-migrations"
        try FileManager.default.createDirectory(atPath: migrations, withIntermediateDirectories: true)
        let files = [
            "0001_customer.sql": "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);\nINSERT INTO customer(name, fax) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) SELECT 'c' || i, 'f' FROM n;",
            "0002_orders.sql": "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id) ON DELETE CASCADE, total REAL);\nINSERT INTO orders(customer_id, total) SELECT id, id * 2.5 FROM customer;\nCREATE INDEX orders_customer ON orders(customer_id);",
            "0003_drop_fax.sql": "ALTER TABLE customer DROP COLUMN fax;",
        ]
        for (name, sql) in files {
            try Data(sql.utf8).write(to: URL(fileURLWithPath: "\(migrations)/\(name)"))
        }
        let migrator = try Migrator(directory: migrations)
        func makeFleet(_ name: String) throws -> [String] {
            let folder = "\(directory)/\(name)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return try (0..<count).map { i in
                var path = "\(folder)/tenant\(i).db"
                if perTenantDirectory {
                    try FileManager.default.createDirectory(atPath: "\(folder)/tenant\(i)", withIntermediateDirectories: true)
                    path = "\(folder)/tenant\(i)/app.db"
                }
                try Connection(path: path, configuration: Configuration(key: key)).close()
                return path
            }
        }
        // Best of `rounds`, fresh files each round, the order alternating.
        var one = Timing(), two = Timing()
        for round in 0..<max(rounds, 1) {
            let first = try makeFleet("fleet-a"), second = try makeFleet("fleet-b")
            func run(_ paths: [String], jobs: Int) throws -> Double {
                sync()
                var results: [MigrationFleet.Result] = []
                let elapsed = seconds { results = MigrationFleet.migrate(paths, with: migrator, jobs: jobs) { _ in Configuration(key: key) } }
                guard results.allSatisfy({ $0.succeeded && $0.toVersion == 3 }) else { throw BenchmarkError("a fleet migration failed") }
                return elapsed
            }
            if round % 2 == 0 {
                one.add(try run(first, jobs: 1))
                two.add(try run(second, jobs: 2))
            } else {
                two.add(try run(second, jobs: 2))
                one.add(try run(first, jobs: 1))
            }
            try? FileManager.default.removeItem(atPath: "\(directory)/fleet-a")
            try? FileManager.default.removeItem(atPath: "\(directory)/fleet-b")
        }
        return (one, two)
    }
}
