/// Fuzzes field keyring files: the input is a keyring file's contents, read
/// with `FieldKeyring.load(from:)` from an owner-only file.
///
/// The reader must accept exactly the documented format, checked against an
/// independent reading of the same bytes (`strongroom field keyring 1`, one
/// `active <id>` naming a key, `key <id> <64 lowercase hex>` lines with new
/// ids from 1 to 4294967295 without leading zeros, empty lines), and give
/// the keys those lines spell. An accepted keyring is written back
/// (`write(to:replacing:)`) as the canonical file and reads as the same
/// keyring; adding, activating and retiring keys keep their promises (a new
/// id, the active key never retired). A refused file is `malformedKey`, and
/// no error quotes its contents.
import FuzzSupport
import Foundation
import Strongroom
import StrongroomCrypto
@testable import StrongroomFields

/// Where each input is written as a keyring.
let directory = ScratchDirectory.make("keyring")

@main
struct Main {
    static func main() { FuzzMain.run(fuzz, seeds: seeds) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let contents = FuzzInput(data, size).bytes
    let path = directory + "/fields.keyring"
    Seeds.write(contents, to: path, mode: 0o600)
    let expected = parse(contents)
    let keyring: FieldKeyring
    do {
        keyring = try FieldKeyring.load(from: path)
    } catch {
        invariant(expected == nil, "load refused a well-formed keyring: \(error.message)")
        invariant(error.code == .malformedKey, "load threw \(error.code), not malformedKey: \(error.message)")
        checkNotQuoted(contents, in: error.message)
        return 0
    }
    guard let expected else { fail("load accepted a keyring the format refuses") }
    check(keyring, is: expected, "the keyring read")

    // Written back: the canonical file, which reads as the same keyring.
    let copy = directory + "/copy.keyring"
    do {
        try keyring.write(to: copy, replacing: true)
        let written = Array(try Data(contentsOf: URL(fileURLWithPath: copy)))
        invariant(written == canonical(expected), "write(to:) does not write the canonical file")
        check(try FieldKeyring.load(from: copy), is: expected, "the keyring written back")
    } catch {
        fail("writing the keyring back failed: \(error)")
    }

    // Changes keep their promises.
    let (more, newID) = keyring.addingKey()
    invariant(!keyring.keyIDs.contains(newID) && more.keyIDs == (keyring.keyIDs + [newID]).sorted() && more.activeKeyID == keyring.activeKeyID,
              "addingKey did not add one new key")
    for id in keyring.keyIDs {
        invariant((try? keyring.activating(id).activeKeyID) == id, "activating(\(id)) failed")
        let fewer = Result { () throws(FieldError) in try keyring.removingKey(id) }
        switch fewer {
        case .success(let fewer):
            invariant(id != keyring.activeKeyID && fewer.keyIDs == keyring.keyIDs.filter { $0 != id }, "removingKey(\(id)) removed the active key or another")
        case .failure:
            invariant(id == keyring.activeKeyID, "removingKey(\(id)) refused a retired key")
        }
    }
    return 0
}

// MARK: The format, read independently

struct Expected: Equatable {
    var active: UInt32
    var keys: [UInt32: [UInt8]]
}

let header = Array("strongroom field keyring 1".utf8)

/// The keyring `contents` spells, or nil when the documented format refuses it.
func parse(_ contents: [UInt8]) -> Expected? {
    let lines = contents.split(separator: 0x0A, omittingEmptySubsequences: false)
    guard let first = lines.first, Array(first) == header else { return nil }
    var active: UInt32?
    var keys: [UInt32: [UInt8]] = [:]
    for line in lines.dropFirst() where !line.isEmpty {
        let words = line.split(separator: 0x20, omittingEmptySubsequences: false).map { Array($0) }
        if words.count == 2, words[0] == Array("active".utf8), active == nil, let id = id(words[1]) {
            active = id
        } else if words.count == 3, words[0] == Array("key".utf8), let id = id(words[1]), keys[id] == nil,
                  words[2].count == 64, words[2].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
            keys[id] = stride(from: 0, to: 64, by: 2).map { nibble(words[2][$0]) << 4 | nibble(words[2][$0 + 1]) }
        } else {
            return nil
        }
    }
    guard let active, keys[active] != nil else { return nil }
    return Expected(active: active, keys: keys)
}

func nibble(_ digit: UInt8) -> UInt8 { digit <= 0x39 ? digit - 0x30 : digit - 0x61 + 10 }

/// 1 to 4294967295 in decimal, no sign, no leading zero.
func id(_ digits: [UInt8]) -> UInt32? {
    guard !digits.isEmpty, digits.first != 0x30, digits.allSatisfy({ (0x30...0x39).contains($0) }), digits.count <= 10 else { return nil }
    let value = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - 0x30) }
    return value <= UInt64(UInt32.max) ? UInt32(value) : nil
}

func canonical(_ keyring: Expected) -> [UInt8] {
    var out = header + Array("\nactive \(keyring.active)\n".utf8)
    for id in keyring.keys.keys.sorted() {
        out += Array("key \(id) \(hex(keyring.keys[id]!))\n".utf8)
    }
    return out
}

func check(_ keyring: FieldKeyring, is expected: Expected, _ what: String) {
    invariant(keyring.activeKeyID == expected.active, "\(what): active key \(keyring.activeKeyID), the file says \(expected.active)")
    invariant(keyring.keyIDs == expected.keys.keys.sorted(), "\(what): key ids \(keyring.keyIDs), the file has \(expected.keys.keys.sorted())")
    for (id, bytes) in expected.keys {
        invariant(keyring.key(id)?.withUnsafeBytes({ Array($0) }) == bytes, "\(what): key \(id) is not the bytes the file spells")
    }
}

/// Errors never quote key material: no run of 12 hex digits of the input
/// appears in the message (the message's own words, the path and the
/// format's name, may well be in the input: the fuzzer copies them).
func isHexDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte) }

func checkNotQuoted(_ contents: [UInt8], in message: String) {
    let secret = contents
    let text = Array(message.utf8)
    guard secret.count >= 12, text.count >= 12 else { return }
    let runs = Set((0...(secret.count - 12)).map { secret[$0..<($0 + 12)] }.filter { $0.allSatisfy(isHexDigit) })
    for start in 0...(text.count - 12) where runs.contains(text[start..<(start + 12)]) {
        fail("an error quotes the keyring: \(message)")
    }
}

// MARK: Seeds

/// Keyrings the library wrote (one key; three keys, rotated; a retired key
/// removed), and near misses. The keys are throwaway test data.
func seeds() throws -> [(name: String, bytes: [UInt8])] {
    func written(_ keyring: FieldKeyring) throws -> [UInt8] {
        let path = directory + "/seed.keyring"
        try keyring.write(to: path, replacing: true)
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
    let one = FieldKeyring.generate()
    let (two, second) = one.addingKey()
    let (three, third) = two.addingKey()
    let rotated = try three.activating(third)
    let retired = try rotated.removingKey(second)
    let key = "key 7 " + String(repeating: "ab", count: 32)
    return [
        ("one-key", try written(one)),
        ("three-keys-rotated", try written(rotated)),
        ("retired-key", try written(retired)),
        ("blank-lines", Array("strongroom field keyring 1\n\nactive 7\n\n\(key)\n\n".utf8)),
        ("largest-id", Array("strongroom field keyring 1\nactive 4294967295\nkey 4294967295 \(String(repeating: "0f", count: 32))\n".utf8)),
        ("active-missing", Array("strongroom field keyring 1\nactive 8\n\(key)\n".utf8)),
        ("crlf", Array("strongroom field keyring 1\r\nactive 7\r\n\(key)\r\n".utf8)),
        ("leading-zero", Array("strongroom field keyring 1\nactive 07\n\(key)\n".utf8)),
    ]
}
