import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// The adversarial review of signed rows (issue 50, item 5): each finding
/// it proved, reproduced here before its fix.
extension SignedRowTests {
    /// An empty signed database whose customer has one more column, typed
    /// `type`, which the signature covers too.
    func database(_ name: String, signing column: String, typed type: String) throws -> DatabaseQueue {
        let signed = [SignedRow("customer", columns: ["name", "country", column], signatureColumn: "row_signature")]
        let queue = try DatabaseQueue(path: dir.file(name), configuration: configuration(signed: signed))
        try queue.write { db in
            try db.execute(sql: Self.schema)
            try db.execute(sql: "ALTER TABLE customer ADD COLUMN \(column) \(type)")
        }
        return queue
    }

    struct Referral: Codable, SealedRecord, Equatable {
        var id: Int64
        var name: String
        var tier: String?
        var referrerTier: String?
        // Both deterministic: neither is bound to a row key.
        static let sealedProperties = [SealedProperty("tier", of: "customer"),
                                       SealedProperty("referrerTier", of: "customer", column: "tier")]
    }

    static let referrals = "SELECT c.*, r.tier AS referrerTier FROM customer c JOIN customer r ON r.id = c.referrer ORDER BY c.id"

    /// Finding 1: a self-join declared two properties of one covered column;
    /// the second row's signature was never checked, and its swapped
    /// deterministic envelope was handed out.
    @Test func aReadOfTwoRowsOfASignedTableIsRefusedAndHandsOutNothing() throws {
        let (path, queue) = try database("selfjoin.db")
        try queue.write { db in
            try db.execute(sql: "ALTER TABLE customer ADD COLUMN referrer INTEGER")
            try db.execute(sql: "UPDATE customer SET referrer = 2 WHERE id = 1")
        }
        try adversary(path, "UPDATE customer SET tier = (SELECT tier FROM customer WHERE id = 1) WHERE id = 2")
        readsFail(queue, naming: "2")
        let error = #expect(throws: StrongroomError.self) { try queue.read { db in _ = try db.fetchAll(Referral.self, sql: Self.referrals) } }
        #expect(error?.code == .misuse && error?.message.contains("tier") == true, "\(String(describing: error))")
        let rowError = #expect(throws: StrongroomError.self) {
            try queue.read { db in _ = try db.fetchAll(sql: Self.referrals, opening: Referral.sealedProperties) }
        }
        #expect(rowError?.code == .misuse, "\(String(describing: rowError))")
    }

    struct SignedProfile: Codable, SealedRecord {
        var id: Int64
        var country: String?
        var email: String?
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    /// Finding 4: a Row read without opening decoded into a type that
    /// declares the signed table skipped the check.
    @Test func aRowDecodedIntoATypeThatDeclaresASignedTableIsRefused() throws {
        let (path, queue) = try database("rowdecode.db")
        try adversary(path, "UPDATE customer SET country = 'KP' WHERE id = 2")
        let rows = try queue.read { db in try db.fetchAll(sql: "SELECT id, country FROM customer ORDER BY id") }
        let error = #expect(throws: StrongroomError.self) { _ = try rows[1].decode(SignedProfile.self) }
        #expect(error?.code == .misuse, "\(String(describing: error))")
        // Read with the declaration, the row decodes once checked (and the changed one fails).
        let opened = try queue.read { db in try db.fetchAll(sql: "SELECT * FROM customer WHERE id = 1", opening: SignedProfile.sealedProperties) }
        #expect(try opened[0].decode(SignedProfile.self).country == "UK")
    }

    struct Account: Codable { var id: Int64; var name: String; var country: String?; var email: String; var tier: String?; var balance: Double? }

    /// Finding 5: SQLite stores -0.0 in a REAL column as 0.0, and NaN as
    /// NULL: signed as given, the app's own row never read again.
    @Test(arguments: [-0.0, Double.nan])
    func aDoubleSQLiteWouldStoreOtherwiseIsRefusedAtTheWrite(balance: Double) throws {
        let queue = try database("balance-\(balance.isNaN ? "nan" : "negzero").db", signing: "balance", typed: "REAL")
        try queue.write { db in
            try db.insert(Account(id: 2, name: "Bob", country: "FR", email: "bob@example.com", tier: nil, balance: 1.5), into: "customer")
        }
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Account(id: 3, name: "Cy", country: nil, email: "cy@example.com", tier: nil, balance: balance), into: "customer") }
        }
        #expect(error?.message.contains("balance") == true, "\(String(describing: error))")
    }

    struct Member: Codable { var id: Int64; var name: String; var country: String?; var email: String; var tier: String?; var since: Date }
    struct MemberRead: Codable, SealedRecord {
        var id: Int64; var since: Date; var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    /// Finding 6: text in a NUMERIC column (DATETIME) is kept as text, and
    /// was refused.
    @Test func aDateInACoveredDatetimeColumnIsSignedAndReadsBack() throws {
        let queue = try database("datetime.db", signing: "since", typed: "DATETIME")
        let since = Date(timeIntervalSince1970: 1_700_000_000)
        try queue.write { db in try db.insert(Member(id: 4, name: "Di", country: "NO", email: "di@example.com", tier: nil, since: since), into: "customer") }
        #expect(try queue.read { db in try db.fetchAll(MemberRead.self, sql: "SELECT * FROM customer") }.map(\.since) == [since])
        // Text SQLite would take for a number is converted: refused.
        struct Numeric: Codable { var id: Int64; var name: String; var country: String?; var email: String; var tier: String?; var since: String }
        #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Numeric(id: 5, name: "Ed", country: nil, email: "ed@example.com", tier: nil, since: "2024"), into: "customer") }
        }
    }

    /// Finding 7: rotating some of a signed table's sealed columns signed
    /// over those only, and called the untouched rows tampered.
    @Test func rotatingSomeSealedColumnsOfASignedTableIsRefusedNamingTheOthers() throws {
        let (path, queue) = try database("rotate-one.db")
        let (rotating, second, _) = try reopenedWithANewKey(path, closing: queue)
        let error = #expect(throws: FieldError.self) {
            _ = try FieldRotation.rotate(rotating, columns: [Self.columns[0]], keyring: second, signedRows: Self.signed)
        }
        #expect(error?.code == .misuse && error?.message.contains("tier") == true, "\(String(describing: error))")
        // Nothing was re-sealed.
        let plain = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        #expect(try plain.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE substr(email, 3, 4) = x'00000001'") } == 2)
        #expect(try rotating.read { db in try db.fetchAll(Customer.self) } == [Self.ada, Self.bob])
    }

    /// Finding 2 (in part): signing what stands is refused once any row of
    /// the table holds a signature: a row without one was changed outside
    /// the app, and is not signed over.
    @Test func signingUnsignedRowsIsRefusedOnceTheTableHoldsSignatures() throws {
        let (path, queue) = try database("resign.db")
        try adversary(path, "UPDATE customer SET country = 'KP', row_signature = NULL WHERE id = 2")
        let error = #expect(throws: FieldError.self) { _ = try queue.write { db in try db.signUnsignedRows(of: "customer") } }
        #expect(error?.code == .misuse && error?.message.contains("signed already") == true, "\(String(describing: error))")
        readsFail(queue, naming: "2")
    }
}

/// The second review of signed rows.
extension SignedRowTests {
    /// Finding A: with every signature cleared, the read's error told the
    /// operator to sign the rows, which would sign over a changed one. A
    /// missing signature is reported as a change outside the app.
    @Test func aClearedSignatureIsReportedAsAChangeNotAsRowsToSign() throws {
        let (path, queue) = try database("cleared.db")
        try adversary(path, "UPDATE customer SET country = 'KP' WHERE id = 2; UPDATE customer SET row_signature = NULL")
        let error = #expect(throws: StrongroomError.self) { try queue.read { db in _ = try db.fetchAll(Customer.self) } }
        #expect(error?.code == .sealedValue && error?.message.contains("signUnsignedRows") == false
                && error?.message.contains("outside the app") == true, "\(String(describing: error))")
    }

    struct Scored: Codable { var id: Int64; var name: String; var country: String?; var email: String; var tier: String?; var score: Double }

    /// Finding C: a column type is read as SQLite reads it (ASCII letters
    /// only): `ﬂoat` is NUMERIC to SQLite, which stores 3.0 as the integer
    /// 3, and was taken for REAL, so the app's own row failed its check.
    @Test func aColumnTypeIsReadAsSQLiteReadsIt() throws {
        let queue = try database("ligature.db", signing: "score", typed: "\u{FB02}oat")
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Scored(id: 1, name: "Ada", country: "UK", email: "ada@example.com", tier: nil, score: 3.0), into: "customer") }
        }
        #expect(error?.message.contains("score") == true, "\(String(describing: error))")
        try queue.write { db in try db.insert(Scored(id: 1, name: "Ada", country: "UK", email: "ada@example.com", tier: nil, score: 3.5), into: "customer") }
        #expect(try queue.read { db in try db.fetchAll(sql: "SELECT * FROM customer", opening: Contact.sealedProperties) }.count == 1)
    }

    /// Finding D: a column of envelope copies the app does not seal stops
    /// the rotation; the refusal says where the envelopes are and what to
    /// do either way, rather than only to rotate it too.
    @Test func aColumnOfCopiedEnvelopesStopsTheRotationWithAMessageThatFitsBothCases() throws {
        let (path, queue) = try database("copies.db")
        try adversary(path, "ALTER TABLE customer ADD COLUMN tier_copy BLOB; UPDATE customer SET tier_copy = tier")
        let (rotating, second, _) = try reopenedWithANewKey(path, closing: queue)
        let error = #expect(throws: FieldError.self) {
            _ = try FieldRotation.rotate(rotating, columns: Self.columns, keyring: second, signedRows: Self.signed)
        }
        #expect(error?.message.contains("tier_copy") == true && error?.message.contains("does not seal") == true, "\(String(describing: error))")
    }

    /// A rowid key given as text is refused by Strongroom, naming the key,
    /// not by SQLite's "datatype mismatch".
    @Test func aRowidKeyGivenAsTextIsRefusedNamingTheKey() throws {
        let (_, queue) = try database("rowid-text.db")
        struct TextID: Codable { var id: String; var name: String; var country: String?; var email: String; var tier: String? }
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(TextID(id: "abc", name: "Cy", country: nil, email: "cy@example.com", tier: nil), into: "customer") }
        }
        #expect(error?.message.contains("give id a value of that type") == true, "\(String(describing: error))")
    }
}
