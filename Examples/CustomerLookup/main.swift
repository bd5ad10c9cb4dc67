// An app reading sealed columns: `customer-lookup DATABASE KEY_FILE FIELD_KEYRING EMAIL`.
// It declares the sealed columns once, finds the customer by e-mail through
// the blind index (the table is never opened to search), and prints the
// plain values.
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

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
    FileHandle.standardError.write(Data("usage: customer-lookup DATABASE KEY_FILE FIELD_KEYRING EMAIL\n".utf8))
    exit(64)
}
do {
    var configuration = Configuration(key: try KeyFile.read(at: arguments[2]))
    configuration.readOnly = true
    configuration.createIfMissing = false
    configuration.keepsJournalMode = true
    let keyring = try FieldKeyring.load(from: arguments[3])
    // Declared once: an app knows its sealed columns (here, those the
    // demo's import sealed).
    configuration.seal([
        .indexed("Email", in: "Customer", indexColumn: "Email_blind_index"),
        .randomized("Phone", in: "Customer"),
        .randomized("Address", in: "Customer"),
    ], keyring: keyring, rowKeys: ["Customer": ["CustomerId"]])
    let queue = try DatabaseQueue(path: arguments[1], configuration: configuration)
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
