import Foundation
import Logging
import Strongroom
import StrongroomTestSupport
import Testing

/// Key text never appears in an error description or a log line.
@Suite("No secret in errors or logs")
struct SecretHygieneTests {
    let dir = TemporaryDirectory()

    @Test func keyMaterialNeverReachesErrorsOrLogs() throws {
        let (logger, store) = CapturingLogHandler.logger()
        let rawBytes = [UInt8](repeating: 0xC3, count: 32)
        let rawHex = String(repeating: "c3", count: 32)
        let passphrase = "Pa55phrase-that-must-not-leak"
        let raw = try DatabaseKey.raw(rawBytes)
        let phrase = try DatabaseKey.passphrase(passphrase)

        var errors: [String] = []
        func record(_ body: () throws -> Void) {
            do { try body() } catch { errors.append("\(error)"); errors.append(String(reflecting: error)) }
        }
        var config = Configuration(key: raw)
        config.logger = logger
        let path = dir.file("h.db")
        let db = try Connection(path: path, configuration: config)
        try db.execute(sql: "CREATE TABLE t(x)")
        try db.rekey(to: phrase)
        db.close()

        var wrong = Configuration(key: raw)
        wrong.logger = logger
        record { _ = try Connection(path: path, configuration: wrong) }
        var pool = Configuration(key: phrase)
        pool.logger = logger
        record {
            let p = try DatabasePool(path: path, configuration: pool)
            _ = try p.read { try $0.fetchAll(sql: "SELECT * FROM t") }
            try p.rekey(to: raw)
        }
        record { _ = try PlaintextConversion.importPlaintext(from: path, to: dir.file("x.db"), key: phrase, logger: logger) }
        record { _ = try PlaintextConversion.exportPlaintext(from: path, key: phrase, to: dir.file("y.db"), .outputIsUnprotectedPlaintext, logger: logger) }
        setenv("STRONGROOM_HYGIENE", rawHex + "zz", 1)
        record { _ = try DatabaseKey.fromEnvironment("STRONGROOM_HYGIENE") }
        unsetenv("STRONGROOM_HYGIENE")

        #expect(errors.count >= 3)
        #expect(store.lines.count >= 3)
        for text in errors + store.lines {
            #expect(!text.lowercased().contains(rawHex), "\(text)")
            #expect(!text.contains(passphrase), "\(text)")
        }
    }
}
