public import Strongroom
import StrongroomCrypto

extension FieldCipher {
    /// The value of `index` for a row whose columns hold `values` (one per
    /// part, in part order, before transformation), under key `keyID` (the
    /// active key by default): key id (4 bytes, big-endian) ‖ the HMAC-SHA256
    /// tag cut to the index's bits (rounded up to bytes, the bits past the
    /// length zero). NULL when a part is NULL.
    ///
    /// ```swift
    /// let probe = try cipher.blindIndex(of: ["Ada@Example.com"], for: emailFolded)
    /// ```
    ///
    /// - Throws: ``FieldError/Code/untransformable`` naming the column and
    ///   `row` when a transformation does not take a value;
    ///   ``FieldError/Code/unknownKeyID``.
    public func blindIndex(of values: [DatabaseValue], for index: BlindIndex, keyID: UInt32? = nil, row: @autoclosure () -> String? = nil) throws(FieldError) -> DatabaseValue {
        guard let inputs = try index.transformed(values, row: row()) else { return .null }
        return try blindIndex(ofTransformed: inputs, for: index, keyID: keyID)
    }

    /// The same, for values already transformed (``BlindIndex/transformed(_:row:)``),
    /// with the index's keys when the caller keeps them (no lookup by definition).
    func blindIndex(ofTransformed inputs: [DatabaseValue], for index: BlindIndex, keys: IndexKeys? = nil, keyID: UInt32? = nil) throws(FieldError) -> DatabaseValue {
        let id = keyID ?? keyring.activeKeyID
        if index.isColumnIndex {
            return try blindIndex(inputs[0], table: index.table, column: index.parts[0].column, keyID: id)
        }
        let keys = keys ?? indexKeys(index)
        // Zero-filled, not uninitialized (as FieldCipher.seal): the latter
        // looks up Array's generic metadata on every call.
        var out = [UInt8](repeating: 0, count: 4 + index.tagByteCount)
        // The error kept, not rethrown through the closure: a Result here
        // instantiated its generic type on every call.
        var failure: FieldError?
        out.withUnsafeMutableBytes { out in
            do throws(FieldError) {
                try writeBlindIndex(ofTransformed: inputs, for: index, keys: keys, keyID: id, into: out)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return .blob(out)
    }

    /// The value of a declared (not a column's own) index: key id
    /// (big-endian) ‖ tag, written to `out` (4 + ``BlindIndex/tagByteCount``
    /// bytes): a lookup binds it from the stack.
    func writeBlindIndex(ofTransformed inputs: [DatabaseValue], for index: BlindIndex, keys: IndexKeys, keyID id: UInt32,
                         into out: UnsafeMutableRawBufferPointer) throws(FieldError) {
        precondition(!index.isColumnIndex && out.count == 4 + index.tagByteCount, "a declared index's value is its key id and tag")
        out[0] = UInt8(id >> 24 & 0xFF); out[1] = UInt8(id >> 16 & 0xFF); out[2] = UInt8(id >> 8 & 0xFF); out[3] = UInt8(id & 0xFF)
        try indexTag(of: inputs, for: index, keys: keys, keyID: id, into: UnsafeMutableRawBufferPointer(rebasing: out[4...]))
    }

    /// The index's tag of `inputs` (transformed), cut to `into.count` bytes
    /// and the index's bits: HMAC-SHA256(index key, context ‖ u32(parts) ‖
    /// for each part: u32(length) ‖ type ‖ payload).
    func indexTag(of inputs: [DatabaseValue], for index: BlindIndex, keys: IndexKeys? = nil, keyID: UInt32, into out: UnsafeMutableRawBufferPointer) throws(FieldError) {
        let mac = try indexMAC(for: index, keys: keys, keyID: keyID)
        let n = indexMessageByteCount(inputs)
        let scratch = scratch(byteCount: n + HMACSHA256.byteCount)
        defer { finishScratch(plaintext: scratch) }
        writeIndexMessage(inputs, into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<n]))
        let tag = UnsafeMutableRawBufferPointer(rebasing: scratch[n...])
        mac.authenticationCode(for: UnsafeRawBufferPointer(rebasing: scratch[0..<n]), into: tag)
        let bits = index.bits
        let byteCount = (bits + 7) / 8
        precondition(out.count == byteCount, "an index tag is its bits rounded up to bytes")
        out.copyMemory(from: UnsafeRawBufferPointer(rebasing: tag[0..<byteCount]))
        if bits % 8 != 0 { out[byteCount - 1] &= UInt8(truncatingIfNeeded: 0xFF << (8 - bits % 8)) }
    }

    /// The message an index hashes for `inputs` (transformed), as
    /// ``indexTag(of:for:keys:keyID:into:)`` builds it: for the planner,
    /// which hashes each distinct one at many lengths.
    func indexMessage(of inputs: [DatabaseValue]) -> [UInt8] {
        var message = [UInt8](repeating: 0, count: indexMessageByteCount(inputs))
        message.withUnsafeMutableBytes { writeIndexMessage(inputs, into: $0) }
        return message
    }

    private func indexMessageByteCount(_ inputs: [DatabaseValue]) -> Int {
        var n = contextPart.count + 4
        for input in inputs { n += 4 + FieldEnvelope.plaintextByteCount(input) }
        return n
    }

    /// [u32(len context) ‖ context ‖] u32(parts) ‖ each: u32(len) ‖ type ‖ payload,
    /// filling `buffer` exactly.
    private func writeIndexMessage(_ inputs: [DatabaseValue], into buffer: UnsafeMutableRawBufferPointer) {
        var writer = FieldEnvelope.Writer(buffer)
        if !contextPart.isEmpty { contextPart.withUnsafeBytes { writer.write($0) } }
        writer.write(bigEndian: UInt32(inputs.count))
        for input in inputs {
            writer.write(bigEndian: UInt32(FieldEnvelope.plaintextByteCount(input)))
            FieldEnvelope.writePlaintext(input, to: &writer)
        }
        precondition(writer.isAtEnd, "an encoding is shorter than its byte count")
    }

    /// The HMAC of `index` under `keyID`, derived on first use:
    /// HKDF-SHA256(master key, salt "strongroom.field.v1", info
    /// "hmac-sha256-blind-index-v2" ‖ 0x00 ‖ ``BlindIndex/derivationInfo``).
    func indexMAC(for index: BlindIndex, keys: IndexKeys? = nil, keyID: UInt32) throws(FieldError) -> HMACSHA256 {
        let keys = keys ?? indexKeys(index)
        return try keys.macs.primitive(keyID) { () throws(FieldError) in
            guard let master = keyring.key(keyID) else {
                throw FieldError(.unknownKeyID, "The keyring has no key \(keyID) (it has \(keyring.keyIDs.map(String.init).joined(separator: ", "))).", table: index.table)
            }
            return try Self.making {
                try HMACSHA256(key: HKDF.deriveKey(from: master, salt: FieldEnvelope.label, info: keys.info, byteCount: HMACSHA256.byteCount))
            }
        }
    }

    /// One index's HKDF info and keys by key id, kept for the cipher's life.
    final class IndexKeys {
        let info: [UInt8]
        let macs = KeyedPrimitives<HMACSHA256>()
        init(info: [UInt8]) { self.info = info }
    }
}

extension BlindIndex {
    static let derivationLabel = Array("hmac-sha256-blind-index-v2".utf8)

    /// What the index's key is bound to: u32-length-prefixed table, name,
    /// then u32(bits), u32(parts), and per part its column and its
    /// transformations' names joined by commas (names lowercased in ASCII,
    /// as SQLite compares them).
    public var derivationInfo: [UInt8] {
        var info = Self.derivationLabel + [0]
        func field(_ bytes: [UInt8]) {
            FieldEnvelope.appendBigEndian(UInt32(bytes.count), to: &info)
            info += bytes
        }
        field(FieldEnvelope.boundName(table))
        field(FieldEnvelope.boundName(name))
        FieldEnvelope.appendBigEndian(UInt32(bits), to: &info)
        FieldEnvelope.appendBigEndian(UInt32(parts.count), to: &info)
        for part in parts {
            field(FieldEnvelope.boundName(part.column))
            field(Array(part.transformationNames.utf8))
        }
        return info
    }

    /// The same index at another length (what the planner tries).
    func withBits(_ bits: Int) -> BlindIndex {
        BlindIndex(name, in: table, bits: bits, parts: parts, unique: false)
    }
}
