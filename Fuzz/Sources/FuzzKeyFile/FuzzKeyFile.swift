/// Fuzzes the readers of database keys: the input is the contents of a key
/// file (`KeyFile.read`, from an owner-only file), the value of a key
/// environment variable (`DatabaseKey.fromEnvironment`) and a passphrase on
/// standard input (`DatabaseKey.readSecretLine`, from a pipe).
///
/// Each reader accepts exactly what its documentation says, checked against
/// an independent reading of the same bytes: a key file is 64 lowercase hex
/// characters and an optional newline; the variable, 64 hex characters of
/// either case and an optional newline; the passphrase, the bytes before the
/// first newline less one carriage return, refused at the length limit. An
/// accepted key holds the bytes the hex spells, spells `x'<hex>'` for
/// SQLCipher, and is written back by `KeyFile.write` as the canonical file;
/// a refused one is `malformedKey` (or `keyMissing`), and no error quotes
/// the contents.
import FuzzSupport
import Foundation
@testable import Strongroom
import StrongroomCrypto

/// Where each input is written as a key file.
let directory = ScratchDirectory.make("keyfile")

@main
struct Main {
    static func main() { FuzzMain.run(fuzz, seeds: seeds) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).bytes
    readKeyFile(bytes)
    readEnvironment(bytes)
    readPassphrase(bytes)
    return 0
}

// MARK: Key file

func isLowercaseHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }
func isHex(_ byte: UInt8) -> Bool { isLowercaseHex(byte) || (0x41...0x46).contains(byte) }

/// The key bytes `hex` spells (either case).
func decode(_ hex: ArraySlice<UInt8>) -> [UInt8] {
    func value(_ byte: UInt8) -> UInt8 { byte <= 0x39 ? byte - 0x30 : (byte | 0x20) - 0x61 + 10 }
    let digits = Array(hex)
    return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
}

func bytes(of secure: SecureBytes) -> [UInt8] { secure.withUnsafeBytes { Array($0) } }

func readKeyFile(_ contents: [UInt8]) {
    let path = directory + "/db.key"
    Seeds.write(contents, to: path, mode: 0o600)
    let valid = (contents.count == 64 || (contents.count == 65 && contents[64] == 0x0A)) && contents.prefix(64).allSatisfy(isLowercaseHex)
    let key: DatabaseKey
    do {
        key = try KeyFile.read(at: path)
    } catch {
        invariant(!valid, "KeyFile.read refused a well-formed key file: \(error.code)")
        invariant(error.code == .malformedKey, "KeyFile.read threw \(error.code), not malformedKey: \(error.message)")
        checkNotQuoted(contents, in: error.message)
        return
    }
    invariant(valid, "KeyFile.read accepted \(contents.count) bytes that are not 64 lowercase hex characters and a newline")
    guard let raw = key.rawBytes else { fail("a key file gave a key that is not raw") }
    let expected = decode(contents.prefix(64))
    invariant(bytes(of: raw) == expected, "the key read is not the bytes the file spells")
    invariant(bytes(of: key.sqlcipherKeyBytes()) == Array("x'".utf8) + contents.prefix(64) + Array("'".utf8),
              "the raw key does not spell x'<hex>' for SQLCipher")
    // Written back: the canonical file, which reads as the same key.
    let copy = directory + "/copy.key"
    unlink(copy)
    do {
        try KeyFile.write(key, to: copy)
        let written = try Data(contentsOf: URL(fileURLWithPath: copy))
        invariant(Array(written) == Array(contents.prefix(64)) + [0x0A], "KeyFile.write does not write the canonical file")
        let reread = try KeyFile.read(at: copy)
        invariant(reread.rawBytes.map(bytes(of:)) == expected, "a written key file reads as another key")
    } catch {
        fail("writing a key file back failed: \(error)")
    }
}

// MARK: Environment

func readEnvironment(_ contents: [UInt8]) {
    // A variable ends at its first NUL.
    let value = Array(contents.prefix(while: { $0 != 0 }))
    let name = "STRONGROOM_FUZZ_KEY"
    var cString = value.map { CChar(bitPattern: $0) } + [0]
    setenv(name, &cString, 1)
    defer { unsetenv(name) }
    let trimmed = value.count == 65 && value[64] == 0x0A ? value.prefix(64) : value[...]
    let valid = trimmed.count == 64 && trimmed.allSatisfy(isHex)
    let key: DatabaseKey
    do {
        key = try DatabaseKey.fromEnvironment(name)
    } catch {
        invariant(!valid, "fromEnvironment refused 64 hex characters: \(error.code)")
        invariant(error.code == (value.isEmpty ? .keyMissing : .malformedKey), "fromEnvironment threw \(error.code): \(error.message)")
        checkNotQuoted(value, in: error.message)
        return
    }
    invariant(valid, "fromEnvironment accepted \(value.count) bytes that are not 64 hex characters")
    invariant(key.rawBytes.map(bytes(of:)) == decode(trimmed), "the key from the environment is not the bytes its hex spells")
}

// MARK: Passphrase on standard input

/// A small limit, so that inputs reach it.
let passphraseLimit = 64

func readPassphrase(_ contents: [UInt8]) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fail("pipe failed") }
    let written = contents.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
    close(fds[1])
    defer { close(fds[0]) }
    invariant(written == contents.count, "the pipe took \(written) of \(contents.count) bytes")
    let lineLength = contents.firstIndex(of: 0x0A) ?? contents.count
    let result = Result { () throws(StrongroomError) in try DatabaseKey.readSecretLine(from: fds[0], limit: passphraseLimit) }
    switch result {
    case .failure(let error):
        invariant(lineLength >= passphraseLimit, "readSecretLine refused a line of \(lineLength) bytes: \(error.message)")
        invariant(error.code == .malformedKey, "readSecretLine threw \(error.code)")
        checkNotQuoted(contents, in: error.message)
    case .success(let line):
        invariant(lineLength < passphraseLimit, "readSecretLine accepted a line of \(lineLength) bytes, over its limit")
        var expected = Array(contents.prefix(lineLength))
        if expected.last == 0x0D { expected.removeLast() }
        invariant(bytes(of: line) == expected, "readSecretLine gave other bytes than the line less its carriage return")
        // An empty passphrase is refused as missing, never used.
        let key = Result { () throws(StrongroomError) in try DatabaseKey.passphrase(line) }
        switch key {
        case .success(let key):
            invariant(!expected.isEmpty && key.isPassphrase && bytes(of: key.sqlcipherKeyBytes()) == expected, "a passphrase key does not hold its bytes")
        case .failure(let error):
            invariant(expected.isEmpty && error.code == .keyMissing, "passphrase(_:) threw \(error.code) for \(expected.count) bytes")
        }
    }
}

// MARK: Helpers

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
        fail("an error quotes the secret: \(message)")
    }
}

/// Key files: well formed, with and without a newline, and near misses.
func seeds() -> [(name: String, bytes: [UInt8])] {
    let hex = Array("00112233445566778899aabbccddeeff0123456789abcdef0f1e2d3c4b5a6978".utf8)
    return [
        ("key-newline", hex + [0x0A]),
        ("key-bare", hex),
        ("key-uppercase", Array(String(decoding: hex, as: UTF8.self).uppercased().utf8)),
        ("key-crlf", hex + [0x0D, 0x0A]),
        ("key-short", Array(hex.prefix(63)) + [0x0A]),
        ("key-x-literal", Array("x'".utf8) + hex + Array("'".utf8)),
        ("passphrase-line", Array("correct horse battery staple\r\nrest".utf8)),
        ("empty", []),
    ]
}
