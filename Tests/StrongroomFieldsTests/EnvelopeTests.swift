import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomFields
import Testing

/// Sealed values: every SQL type round-trips exactly; every way an envelope
/// can be damaged, moved or opened with the wrong keys is a typed error
/// naming table, column and row, never a crash and never wrong plaintext.
@Suite("Field envelopes")
struct EnvelopeTests {
    let keyring = FieldKeyring.generate()

    static let values: [DatabaseValue] = [
        .null, .integer(0), .integer(-1), .integer(.max), .integer(.min), .real(3.25), .real(-0.0), .real(.infinity),
        .text(""), .text("ada@example.com"), .text("Zoë, Ωmega, 東京, 🙂"), .blob([]), .blob([0, 1, 2, 255]),
        .blob((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
    ]

    @Test(arguments: SealingMode.allCases)
    func everyTypeRoundTripsExactly(mode: SealingMode) throws {
        let cipher = FieldCipher(keyring: keyring)
        for value in Self.values {
            let sealed = try cipher.seal(value, table: "customer", column: "email", rowKey: [.integer(7)], mode: mode)
            if value.isNull {
                #expect(sealed == .null)
                continue
            }
            guard case .blob = sealed else { Issue.record("not a blob"); continue }
            let opened = try cipher.open(sealed, table: "customer", column: "email", rowKey: [.integer(7)])
            switch (value, opened) {
            case (.real(let a), .real(let b)): #expect(a.bitPattern == b.bitPattern)
            default: #expect(opened == value)
            }
        }
    }

    /// One cipher's scratch memory grows for large values and is given back
    /// after them: values of every size, in turn, with row keys of every type.
    @Test(arguments: SealingMode.allCases)
    func largeAndSmallValuesInTurnWithEveryKindOfRowKey(mode: SealingMode) throws {
        let cipher = FieldCipher(keyring: keyring)
        let rowKey: [DatabaseValue] = [.integer(-3), .text("Zoë 東京"), .real(2.5), .blob([0, 255]), .text("")]
        let sizes = [1 << 20, 3, 100_000, 0, 70_000, 255, 1 << 17]
        for size in sizes {
            let value = DatabaseValue.text(String(repeating: "é", count: size / 2) + (size % 2 == 1 ? "x" : ""))
            let sealed = try cipher.seal(value, table: "Café", column: "Ünit", rowKey: rowKey, mode: mode)
            #expect(try cipher.open(sealed, table: "Café", column: "Ünit", rowKey: rowKey, mode: mode) == value)
            #expect(try cipher.blindIndex(value, table: "Café", column: "Ünit") == cipher.blindIndex(value, table: "Café", column: "Ünit"))
        }
    }

    /// Issue 36, item 9: a value opened without a row key (a deterministic
    /// column, bound to no row, as `verify` reads it) was named "t.c, row 
    /// holds …", the row left blank; the message names no row then, and the
    /// error's `row` is nil. With a row key the row is still named.
    @Test func anErrorWithoutARowKeyNamesNoBlankRow() throws {
        let cipher = FieldCipher(keyring: keyring)
        let randomized = try cipher.seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized)
        let deterministic = try cipher.seal(.text("x"), table: "t", column: "c", rowKey: [], mode: .deterministic)
        var tampered = deterministic
        if case .blob(var bytes) = tampered { bytes[bytes.count - 1] ^= 1; tampered = .blob(bytes) }
        let failures: [(DatabaseValue, SealingMode?)] = [
            (randomized, .deterministic),     // mode mismatch
            (.text("plain"), .deterministic), // not sealed
            (.blob([9, 9, 9]), nil),          // malformed
            (tampered, .deterministic),       // does not authenticate
        ]
        for (value, mode) in failures {
            let error = #expect(throws: FieldError.self) { try cipher.open(value, table: "t", column: "c", rowKey: [], mode: mode) }
            #expect(error?.row == nil, "\(error?.message ?? "")")
            #expect(error?.message.contains(", row") == false && error?.message.contains("row  ") == false, "\(error?.message ?? "")")
            #expect(error?.message.hasPrefix("t.c ") == true, "\(error?.message ?? "")")
        }
        let keyed = #expect(throws: FieldError.self) { try cipher.open(.text("plain"), table: "t", column: "c", rowKey: [.integer(7)]) }
        #expect(keyed?.row == "7")
        #expect(keyed?.message.hasPrefix("t.c, row 7 holds") == true, "\(keyed?.message ?? "")")
    }

    @Test func deterministicValuesRepeatAndRandomizedOnesDoNot() throws {
        let cipher = FieldCipher(keyring: keyring)
        let a = try cipher.seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .deterministic)
        let b = try cipher.seal(.text("x"), table: "T", column: "C", rowKey: [.integer(2)], mode: .deterministic)
        #expect(a == b, "deterministic: bound to table and column (without ASCII case), not to the row")
        let r1 = try cipher.seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized)
        let r2 = try cipher.seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized)
        #expect(r1 != r2)
        // A text and a blob with the same bytes are different values.
        #expect(try cipher.seal(.text("x"), table: "t", column: "c", rowKey: [], mode: .deterministic)
                != cipher.seal(.blob(Array("x".utf8)), table: "t", column: "c", rowKey: [], mode: .deterministic))
    }

    /// Flipping any one bit anywhere in an envelope never yields a value.
    @Test(arguments: [SealingMode.randomized, .deterministic])
    func everyFlippedBitIsRefused(mode: SealingMode) throws {
        let cipher = FieldCipher(keyring: keyring)
        guard case .blob(let envelope) = try cipher.seal(.text("secret"), table: "t", column: "c", rowKey: [.integer(1)], mode: mode) else { return }
        for byte in envelope.indices {
            for bit in 0..<8 {
                var damaged = envelope
                damaged[byte] ^= UInt8(1 << bit)
                let error = #expect(throws: FieldError.self) { try cipher.open(.blob(damaged), table: "t", column: "c", rowKey: [.integer(1)]) }
                #expect([.tampered, .malformedEnvelope, .unknownKeyID].contains(error?.code))
                #expect(error?.table == "t" && error?.column == "c" && error?.row == "1")
            }
        }
    }

    @Test func truncatedEnvelopesAreRefused() throws {
        let cipher = FieldCipher(keyring: keyring)
        guard case .blob(let envelope) = try cipher.seal(.integer(42), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized) else { return }
        for length in 0..<envelope.count {
            let error = #expect(throws: FieldError.self) { try cipher.open(.blob(Array(envelope.prefix(length))), table: "t", column: "c", rowKey: [.integer(1)]) }
            #expect([.tampered, .malformedEnvelope].contains(error?.code))
        }
    }

    @Test func valuesMovedBetweenRowsOrColumnsDoNotOpen() throws {
        let cipher = FieldCipher(keyring: keyring)
        let sealed = try cipher.seal(.text("ada@example.com"), table: "customer", column: "email", rowKey: [.integer(1)], mode: .randomized)
        for (table, column, row) in [("customer", "email", DatabaseValue.integer(2)), ("customer", "phone", .integer(1)),
                                     ("employee", "email", .integer(1)), ("customer", "email", .text("1"))] {
            let error = #expect(throws: FieldError.self) { try cipher.open(sealed, table: table, column: column, rowKey: [row]) }
            #expect(error?.code == .tampered)
        }
        let deterministic = try cipher.seal(.text("ada@example.com"), table: "customer", column: "email", rowKey: [], mode: .deterministic)
        #expect((#expect(throws: FieldError.self) { try cipher.open(deterministic, table: "customer", column: "phone", rowKey: []) })?.code == .tampered)
        // Composite keys: the values and their order count.
        let composite = try cipher.seal(.integer(5), table: "line", column: "qty", rowKey: [.integer(1), .integer(2)], mode: .randomized)
        #expect(try cipher.open(composite, table: "line", column: "qty", rowKey: [.integer(1), .integer(2)]) == .integer(5))
        #expect(throws: FieldError.self) { try cipher.open(composite, table: "line", column: "qty", rowKey: [.integer(2), .integer(1)]) }
    }

    @Test func plainValuesUnknownKeysAndOtherKeyringsAreRefused() throws {
        let cipher = FieldCipher(keyring: keyring)
        for plain in [DatabaseValue.text("ada@example.com"), .integer(3), .real(1.5)] {
            #expect((#expect(throws: FieldError.self) { try cipher.open(plain, table: "t", column: "c", rowKey: []) })?.code == .notSealed)
        }
        #expect((#expect(throws: FieldError.self) { try cipher.open(.blob(Array("plain".utf8)), table: "t", column: "c", rowKey: []) })?.code == .malformedEnvelope)
        let (bigger, newID) = keyring.addingKey()
        let underNewKey = try FieldCipher(keyring: bigger.activating(newID)).seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized)
        #expect(FieldCipher.keyID(of: underNewKey) == newID)
        #expect((#expect(throws: FieldError.self) { try cipher.open(underNewKey, table: "t", column: "c", rowKey: [.integer(1)]) })?.code == .unknownKeyID)
        let other = FieldCipher(keyring: FieldKeyring.generate())
        let sealed = try cipher.seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized)
        #expect((#expect(throws: FieldError.self) { try other.open(sealed, table: "t", column: "c", rowKey: [.integer(1)]) })?.code == .tampered)
    }

    @Test func errorsNeverQuoteTheValue() throws {
        let cipher = FieldCipher(keyring: keyring)
        guard case .blob(var envelope) = try cipher.seal(.text("marker-4f1c"), table: "t", column: "c", rowKey: [.integer(9)], mode: .randomized) else { return }
        envelope[envelope.count - 1] ^= 1
        let error = #expect(throws: FieldError.self) { try cipher.open(.blob(envelope), table: "t", column: "c", rowKey: [.integer(9)]) }
        #expect(error?.message.contains("marker") == false)
        #expect(error?.message.contains("t.c, row 9") == true)
    }

    @Test func blindIndexesMatchEqualValuesPerColumnAndKey() throws {
        let cipher = FieldCipher(keyring: keyring)
        let a = try cipher.blindIndex(.text("ada@example.com"), table: "customer", column: "email")
        #expect(a == (try cipher.blindIndex(.text("ada@example.com"), table: "Customer", column: "EMAIL")))
        #expect(a != (try cipher.blindIndex(.text("ada@example.com"), table: "customer", column: "phone")))
        #expect(a != (try cipher.blindIndex(.text("bob@example.com"), table: "customer", column: "email")))
        guard case .blob(let bytes) = a else { Issue.record("not a blob"); return }
        #expect(bytes.count == 20)
        #expect(Array(bytes.prefix(4)) == [0, 0, 0, 1])
        #expect(try cipher.blindIndex(.null, table: "customer", column: "email") == .null)
    }
}
