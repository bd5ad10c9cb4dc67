/// Fuzzes sealed-value envelopes (`FieldCipher.open`, `FieldEnvelope`) with
/// a fixed keyring (key 1 retired, key 2 active).
///
/// The first byte picks what the rest feeds:
/// - 0: the rest, after a mode byte, is an envelope for `customer.email` of
///   row 7, opened as it is. Opening returns a value or throws a
///   `FieldError` whose code is the one the format document's checks give
///   (malformed, tampered, unknown key) in their order; an envelope that
///   opens is accepted by the other entry points alike, a deterministic one
///   seals again to the very same bytes, a randomized one opens for its
///   row only.
/// - 1: a value, table, column, row key and mode made from the rest are
///   sealed and opened: the value comes back exactly (type and bytes),
///   names match without ASCII case, a deterministic envelope is the same
///   every time, a randomized one does not open for another row or column,
///   and every edit the rest describes (bit flips, truncation, insertion)
///   makes opening fail with a typed error, never return a value.
/// - 2: the rest is a plaintext (type byte and payload): one that decodes
///   encodes again to the same bytes ("a value opens to exactly what was
///   stored").
import FuzzSupport
import Strongroom
import StrongroomCrypto
@testable import StrongroomFields

/// Two fixed master keys: 1 (retired) and 2 (active). Test data, not secrets.
let keyring = FieldKeyring(activeKeyID: 2, keys: [
    1: SecureBytes(copying: (0..<32).map { UInt8($0) }),
    2: SecureBytes(copying: (0..<32).map { UInt8(0xA0 &+ $0) }),
])
nonisolated(unsafe) let cipherForKey: [UInt32: FieldCipher] = [
    1: FieldCipher(keyring: try! keyring.activating(1)),
    2: FieldCipher(keyring: keyring),
]
nonisolated(unsafe) let cipher = cipherForKey[2]!

let fixedTable = "customer", fixedColumn = "email"
let fixedRowKey: [DatabaseValue] = [.integer(7)]

@main
struct Main {
    static func main() { FuzzMain.run(fuzz, seeds: seeds) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch input.choice(3) {
    case 0: openGivenEnvelope(&input)
    case 1: sealAndOpen(&input)
    default: decodePlaintext(&input)
    }
    return 0
}

// MARK: 0: an envelope as given

let modes: [SealingMode?] = [nil, .randomized, .deterministic, .indexed]

func openGivenEnvelope(_ input: inout FuzzInput) {
    let mode = modes[input.choice(modes.count)]
    let bytes = input.rest()
    let expected = expectedFailure(bytes, mode: mode)
    let opened: DatabaseValue
    do {
        opened = try cipher.open(.blob(bytes), table: fixedTable, column: fixedColumn, rowKey: fixedRowKey, mode: mode)
    } catch {
        invariant(expected.contains(error.code), "open threw \(error.code) (\(error.message)) for \(hex(bytes)); the format's checks give \(expected)")
        // The in-place entry point fails alike.
        let again = openInPlace(bytes, table: fixedTable, column: fixedColumn, mode: mode)
        guard case .failure(let other) = again, other.code == error.code else {
            fail("open(envelopeBytes:) disagrees with open(_:) on \(hex(bytes))")
        }
        return
    }
    invariant(expected.contains(nil), "open returned a value for \(hex(bytes)), which the format's checks refuse with \(expected)")
    invariant(!opened.isNull, "an envelope opened to NULL")
    let keyID = FieldCipher.keyID(of: .blob(bytes))
    invariant(keyID == 1 || keyID == 2, "an envelope under key \(String(describing: keyID)) opened")
    let reopened = try? openInPlace(bytes, table: fixedTable.uppercased(), column: fixedColumn.uppercased(), mode: mode).get()
    invariant(reopened.map { same($0, opened) } == true, "open(envelopeBytes:) with the names in upper case gives another result")
    if bytes[1] == FieldEnvelope.Algorithm.aes256SIV.rawValue {
        // Deterministic: sealing the value again under the same key gives the same bytes.
        let sealed = try? cipherForKey[keyID!]!.seal(opened, table: fixedTable, column: fixedColumn, rowKey: [.integer(8)], mode: .deterministic)
        invariant(sealed == .blob(bytes), "a deterministic envelope does not seal again to its own bytes: \(hex(bytes))")
    } else {
        // Randomized: bound to its row.
        let moved = Result { () throws(FieldError) in
            try cipher.open(.blob(bytes), table: fixedTable, column: fixedColumn, rowKey: [.integer(8)], mode: mode)
        }
        guard case .failure(let error) = moved, error.code == .tampered else {
            fail("a randomized envelope of row 7 opened for row 8, or failed otherwise than tampered: \(hex(bytes))")
        }
    }
}

/// `open(envelopeBytes:)`: the envelope read in place.
func openInPlace(_ bytes: [UInt8], table: String, column: String, mode: SealingMode?) -> Result<DatabaseValue, FieldError> {
    bytes.withUnsafeBytes { raw in
        Result { () throws(FieldError) in try cipher.open(envelopeBytes: raw, table: table, column: column, rowKey: fixedRowKey, mode: mode) }
    }
}

/// The codes the checks of <doc:SealedValueFormat> ("Opening a value")
/// give, in their order; nil stands for "may open". After the checks that
/// need no key, authentication decides: tampered, or (for a plaintext that
/// authenticates but is no value) malformed.
func expectedFailure(_ bytes: [UInt8], mode: SealingMode?) -> Set<FieldError.Code?> {
    guard bytes.count >= 6, bytes[0] == 1, bytes[1] == 1 || bytes[1] == 2 else { return [.malformedEnvelope] }
    let deterministic = bytes[1] == 2
    if let mode, (mode == .deterministic) != deterministic { return [.tampered] }
    let keyID = UInt32(bytes[2]) << 24 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 8 | UInt32(bytes[5])
    if keyID != 1 && keyID != 2 { return [.unknownKeyID] }
    if bytes.count < 6 + (deterministic ? 16 : 28) + 1 { return [.malformedEnvelope] }
    return [.tampered, .malformedEnvelope, nil]
}

// MARK: 1: seal, open, tamper

func value(_ input: inout FuzzInput) -> DatabaseValue {
    switch input.choice(6) {
    case 0: return .null
    case 1: return .integer(Int64(bitPattern: input.uint64()))
    case 2: return .real(Double(bitPattern: input.uint64()))
    case 3: return .text(String(decoding: input.piece(), as: UTF8.self))
    case 4: return .blob(input.piece())
    default: return .blob(input.bytes(Int(input.byte()) * 16))   // up to 4 KiB
    }
}

func name(_ input: inout FuzzInput) -> String {
    String(decoding: input.piece(maximum: 24), as: UTF8.self)
}

func sealAndOpen(_ input: inout FuzzInput) {
    let mode = SealingMode.allCases[input.choice(SealingMode.allCases.count)]
    let value = value(&input)
    let table = name(&input), column = name(&input)
    var rowKey: [DatabaseValue] = []
    for _ in 0..<(1 + input.choice(3)) { rowKey.append(FuzzEnvelope.value(&input)) }
    let sealed: DatabaseValue
    do {
        sealed = try cipher.seal(value, table: table, column: column, rowKey: rowKey, mode: mode)
    } catch {
        invariant(error.code == .misuse && mode != .deterministic && rowKey.contains(where: \.isNull) && !value.isNull,
                  "seal threw \(error.code): \(error.message)")
        return
    }
    invariant(!(mode != .deterministic && rowKey.contains(where: \.isNull) && !value.isNull), "a randomized value was sealed to a row key with NULL")
    guard case .blob(let envelope) = sealed else {
        invariant(value.isNull && sealed.isNull, "seal gave \(sealed) for a value that is not NULL")
        return
    }
    invariant(FieldCipher.keyID(of: sealed) == keyring.activeKeyID, "the envelope does not carry the active key id")

    // The value comes back exactly, names compared without ASCII case.
    let openMode: SealingMode? = input.choice(2) == 0 ? nil : mode
    let opened: DatabaseValue
    do {
        opened = try cipher.open(sealed, table: table.uppercased(), column: column.lowercased(), rowKey: rowKey, mode: openMode)
    } catch {
        // uppercased() also changes non-ASCII letters, which the binding keeps.
        let asciiOnly = table.utf8.allSatisfy { $0 < 0x80 } && column.utf8.allSatisfy { $0 < 0x80 }
        invariant(!asciiOnly, "a sealed value does not open: \(error.code) \(error.message)")
        opened = (try? cipher.open(sealed, table: table, column: column, rowKey: rowKey, mode: openMode)) ?? .null
    }
    invariant(same(opened, value), "sealed \(value), opened \(opened)")

    if mode == .deterministic {
        let again = try? cipher.seal(value, table: table, column: column, rowKey: [.integer(1)], mode: mode)
        invariant(again == sealed, "two deterministic envelopes of one value differ")
    } else {
        let otherRow = rowKey + [.integer(0)]
        let moved = Result { () throws(FieldError) in try cipher.open(sealed, table: table, column: column, rowKey: otherRow) }
        guard case .failure(let error) = moved, error.code == .tampered else {
            fail("a randomized envelope opened for another row, or failed otherwise than tampered")
        }
    }
    let otherColumn = Result { () throws(FieldError) in try cipher.open(sealed, table: table, column: column + "x", rowKey: rowKey) }
    guard case .failure(let error) = otherColumn, error.code == .tampered else {
        fail("an envelope opened for another column, or failed otherwise than tampered")
    }
    if mode == .indexed {
        let index = try? cipher.blindIndex(value, table: table, column: column)
        let again = try? cipher.blindIndex(value, table: table, column: column.uppercased())
        invariant(index != nil && (index == again || !column.utf8.allSatisfy { $0 < 0x80 }), "blind indexes of one value differ")
        if case .blob(let tag)? = index { invariant(tag.count == 20 && tag.prefix(4).elementsEqual([0, 0, 0, 2]), "a blind index is not key id ‖ 16 bytes") }
    }

    // Edits: whatever changes the bytes makes opening fail.
    var edited = envelope
    while !input.isAtEnd {
        switch input.choice(4) {
        case 0:
            let at = Int(input.uint64() % UInt64(max(edited.count, 1)))
            if at < edited.count { edited[at] ^= 1 << (input.byte() % 8) }
        case 1:
            edited.removeLast(min(edited.count, 1 + input.choice(32)))
        case 2:
            let at = Int(input.uint64() % UInt64(edited.count + 1))
            edited.insert(input.byte(), at: at)
        default:
            let at = Int(input.uint64() % UInt64(max(edited.count, 1)))
            if at < edited.count { edited[at] = input.byte() }
        }
    }
    if edited != envelope {
        let result = Result { () throws(FieldError) in try cipher.open(.blob(edited), table: table, column: column, rowKey: rowKey) }
        if case .success(let wrong) = result {
            fail("an edited envelope opened (to \(wrong)): sealed \(hex(envelope)), edited \(hex(edited))")
        }
    }
}

// MARK: 2: plaintext

func decodePlaintext(_ input: inout FuzzInput) {
    let bytes = input.rest()
    let decoded = bytes.withUnsafeBytes { FieldEnvelope.decodePlaintext($0) }
    guard let decoded else { return }
    invariant(!decoded.isNull, "a plaintext decoded to NULL")
    var encoded = [UInt8](repeating: 0, count: FieldEnvelope.plaintextByteCount(decoded))
    encoded.withUnsafeMutableBytes { buffer in
        var writer = FieldEnvelope.Writer(buffer)
        FieldEnvelope.writePlaintext(decoded, to: &writer)
        invariant(writer.isAtEnd, "a plaintext's byte count is not what is written")
    }
    invariant(encoded == bytes, "the plaintext \(hex(bytes)) decodes to a value that encodes as \(hex(encoded))")
}

// MARK: Helpers

/// The same value: same type and same bytes (REAL by its bits, TEXT by its UTF-8).
func same(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.integer(let x), .integer(let y)): return x == y
    case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
    case (.text(let x), .text(let y)): return Array(x.utf8) == Array(y.utf8)
    case (.blob(let x), .blob(let y)): return x == y
    default: return false
    }
}

// MARK: Seeds

/// Envelopes the library sealed for `customer.email` of row 7 (under both
/// keys, both algorithms, every type), in the layout of choice 0; a few
/// inputs for choices 1 and 2.
func seeds() throws -> [(name: String, bytes: [UInt8])] {
    let values: [(String, DatabaseValue)] = [
        ("integer", .integer(42)), ("negative", .integer(-1)), ("real", .real(2.5)), ("text", .text("ada@example.com")),
        ("unicode", .text("Zoë 東京 🙂")), ("empty-text", .text("")), ("blob", .blob([0, 1, 2, 255])), ("empty-blob", .blob([])),
    ]
    var out: [(name: String, bytes: [UInt8])] = []
    for (keyID, keyCipher) in cipherForKey.sorted(by: { $0.key < $1.key }) {
        for mode in [SealingMode.randomized, .deterministic] {
            for (label, value) in values {
                guard case .blob(let envelope) = try keyCipher.seal(value, table: fixedTable, column: fixedColumn, rowKey: fixedRowKey, mode: mode) else { continue }
                out.append(("open-key\(keyID)-\(mode.rawValue)-\(label)", [0, mode == .deterministic ? 2 : 1] + envelope))
            }
        }
    }
    out.append(("open-truncated", [0, 0, 1, 2, 0, 0, 0, 2]))
    out.append(("open-unknown-key", [0, 0, 1, 1, 0, 0, 0, 9] + [UInt8](repeating: 0, count: 29)))
    out.append(("seal-text-indexed", [1, 2, 3, 5] + Array("hello".utf8) + [8] + Array("customer".utf8) + [5] + Array("email".utf8) + [0, 1] + [0, 0, 0, 0, 0, 0, 0, 7]))
    out.append(("seal-blob-deterministic-flip", [1, 1, 4, 3, 1, 2, 3, 1] + Array("t".utf8) + [1] + Array("c".utf8) + [0, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0, 9, 3]))
    out.append(("plaintext-integer", [2, 1, 0, 0, 0, 0, 0, 0, 0, 42]))
    out.append(("plaintext-text", [2, 3] + Array("ada".utf8)))
    out.append(("plaintext-blob", [2, 4, 0, 255]))
    return out
}
