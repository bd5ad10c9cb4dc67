// The Chinook app's model at work (make demo runs it):
//   chinook-model schema [--next] PATH          writes the model's schema file
//   chinook-model validate [--next] DATABASE KEY_FILE
//                                               validates a migrated database against
//                                               the model and reads records by position
import Foundation
import StrongroomMacros

var arguments = Array(CommandLine.arguments.dropFirst())
let next = arguments.contains("--next")
arguments.removeAll { $0 == "--next" }
let schema = ChinookModel.schema(next: next)

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("chinook-model: \(message)\n".utf8))
    exit(status)
}

switch (arguments.first, arguments.count) {
case ("schema", 2):
    do {
        try schema.writeSchemaFile(to: arguments[1])
        print("Wrote \(arguments[1]): \(schema.tables.count) tables from the Swift model\(next ? " (with TrackReview)" : "").")
    } catch {
        fail("\(error)", status: 73)
    }
case ("validate", 3):
    do {
        var configuration = Configuration(key: try KeyFile.read(at: arguments[2]))
        configuration.readOnly = true
        configuration.createIfMissing = false
        configuration.keepsJournalMode = true
        let queue = try DatabaseQueue(path: arguments[1], configuration: configuration)
        try queue.read { db in
            try schema.validate(db)
            print("\(arguments[1]) matches the Swift model: \(schema.tables.count) tables, their columns, keys, foreign keys and indexes.")
            let customers = try db.fetchAll(Customer.self, sql: "SELECT * FROM Customer ORDER BY CustomerId LIMIT 3")
            for customer in customers {
                print("  Customer \(customer.CustomerId): \(customer.FirstName) \(customer.LastName), \(customer.Country ?? "?"), tier \(customer.LoyaltyTier.rawValue)")
            }
            let invoices = try db.fetchAll(Invoice.self)
            let total = invoices.reduce(0) { $0 + $1.Total }
            print(String(format: "  %d invoices read as @Table records, %.2f in all; the first dated %@", invoices.count, total,
                         invoices.first.map { ISO8601DateFormatter().string(from: $0.InvoiceDate) } ?? "-"))
        }
    } catch let mismatch as SchemaMismatch {
        fail(mismatch.description, status: 1)
    } catch {
        fail("\(error)", status: 65)
    }
default:
    fail("usage: chinook-model schema [--next] PATH | chinook-model validate [--next] DATABASE KEY_FILE", status: 64)
}
