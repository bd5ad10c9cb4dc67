// The example's own (Examples/CustomerService), unchanged: the same JSON.

import Foundation

/// A customer as the API shows it: every field, `null` included.
struct CustomerJSON: Encodable {
    let customer: Customer

    enum Keys: String, CodingKey { case id, name, email, note, country }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(customer.id, forKey: .id)
        try container.encode(customer.name, forKey: .name)
        try container.encode(customer.email, forKey: .email)
        try container.encode(customer.note, forKey: .note)
        try container.encode(customer.country, forKey: .country)
    }
}

/// A page of `GET /customers?after=&limit=`: `next` is the `after` of the
/// next page, null on the last one.
struct CustomerPage: Encodable {
    let customers: [CustomerJSON]
    let next: Int64?

    enum Keys: String, CodingKey { case customers, next }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(customers, forKey: .customers)
        try container.encode(next, forKey: .next)
    }
}
