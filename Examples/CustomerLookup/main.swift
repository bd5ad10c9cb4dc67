// An app reading sealed columns: `customer-lookup [--signed-rows] DATABASE KEY_FILE FIELD_KEYRING EMAIL`.
// It declares the sealed columns once, finds the customer by e-mail through
// the blind index (the table is never opened to search), and prints the
// plain values. With --signed-rows it also declares Customer's rows signed
// (name, city, country and the sealed values, in RowSignature), and checks
// the row's signature before it prints anything of it;
// `customer-lookup --sign-rows DATABASE KEY_FILE FIELD_KEYRING` signs the rows
// once, after a migration added the RowSignature column.
import Foundation
import Strongroom
import StrongroomFields

struct Customer: Codable, SealedRecord {
    let CustomerId: Int64
    let FirstName: String
    let LastName: String
    let Email: String
    let Phone: String?
    let Address: String?
    let City: String?
    let Country: String?
    // The sealed properties, each opened as its column of Customer, bound to
    // the row key CustomerId the record holds (declared below).
    static let sealedProperties = [SealedProperty("Email", of: "Customer"), SealedProperty("Phone", of: "Customer"),
                                   SealedProperty("Address", of: "Customer")]
}

var arguments = CommandLine.arguments
let signing = arguments.count == 5 && arguments[1] == "--sign-rows"
let signedRows = signing || (arguments.count == 6 && arguments[1] == "--signed-rows")
if signedRows { arguments.remove(at: 1) }
guard arguments.count == 5 || (signing && arguments.count == 4) else {
    FileHandle.standardError.write(Data("usage: customer-lookup [--signed-rows] DATABASE KEY_FILE FIELD_KEYRING EMAIL\n       customer-lookup --sign-rows DATABASE KEY_FILE FIELD_KEYRING\n".utf8))
    exit(64)
}
do {
    var configuration = Configuration(key: try KeyFile.read(at: arguments[2]))
    configuration.readOnly = !signing
    configuration.createIfMissing = false
    configuration.keepsJournalMode = true
    let keyring = try FieldKeyring.load(from: arguments[3])
    // Declared once: an app knows its sealed columns (here, those the
    // demo's import sealed).
    configuration.seal([
        .indexed("Email", in: "Customer", indexColumn: "Email_blind_index"),
        .randomized("Phone", in: "Customer"),
        .randomized("Address", in: "Customer"),
    ], keyring: keyring, rowKeys: ["Customer": ["CustomerId"]],
       signedRows: signedRows ? [SignedRow("Customer", columns: ["FirstName", "LastName", "City", "Country"], signatureColumn: "RowSignature")] : [])
    let queue = try DatabaseQueue(path: arguments[1], configuration: configuration)
    if signing {
        let count = try queue.write { db in try db.signUnsignedRows(of: "Customer") }
        print("Signed \(count) customer rows.")
        exit(0)
    }
    let email = arguments[4]
    // The probe is computed in Swift, under every key of the keyring, and
    // bound: the connection has no SQL function that sees a key.
    let found = try queue.read { db in
        try db.fetchOne(Customer.self, where: .index("Email_blind_index", equals: email))
    }
    guard let customer = found else {
        print("No customer with e-mail \(email).")
        exit(1)
    }
    print("Customer \(customer.CustomerId): \(customer.FirstName) \(customer.LastName) <\(customer.Email)>")
    print("  phone   \(customer.Phone ?? "-")")
    print("  address \(customer.Address ?? "-"), \(customer.City ?? "-"), \(customer.Country ?? "-")")
} catch {
    FileHandle.standardError.write(Data("customer-lookup: \(error)\n".utf8))
    exit(1)
}
