public import Strongroom
import StrongroomCrypto

/// Seals and opens column values with a ``FieldKeyring``: the one place that
/// builds and reads envelopes (<doc:SealedValueFormat>).
///
/// Per-column subkeys are derived once (HKDF-SHA256) and their OpenSSL
/// contexts kept, so sealing a value costs one AES operation. A cipher is
/// not thread-safe: each connection has its own.
///
/// ```swift
/// let cipher = FieldCipher(keyring: try FieldKeyring.load(from: "Keys/fields.keyring"))
/// let sealed = try cipher.seal(.text("ada@example.com"), table: "customer", column: "email",
///                              rowKey: [.integer(7)], mode: .randomized)
/// let email = try cipher.open(sealed, table: "customer", column: "email", rowKey: [.integer(7)])
/// ```
public final class FieldCipher {
    /// The keys it seals and opens with.
    public let keyring: FieldKeyring

    private struct Subkey {
        let keyID: UInt32
        let column: BoundColumn
        var table: [UInt8] { column.table }
        var name: [UInt8] { column.column }
    }

    /// One column's bound names and the start of its associated data
    /// (label ‖ u32 ‖ table ‖ u32 ‖ column), worked out once.
    final class BoundColumn {
        let table: [UInt8]
        let column: [UInt8]
        let associatedDataPrefix: [UInt8]
        /// The column's primitives, by key id, set up on first use.
        var aeads: [UInt32: AESGCM] = [:]
        var sivs: [UInt32: AESSIV] = [:]
        var indexes: [UInt32: HMACSHA256] = [:]
        init(table: String, column: String) {
            self.table = FieldEnvelope.boundName(table)
            self.column = FieldEnvelope.boundName(column)
            var prefix = FieldEnvelope.label
            FieldEnvelope.appendBigEndian(UInt32(self.table.count), to: &prefix)
            prefix += self.table
            FieldEnvelope.appendBigEndian(UInt32(self.column.count), to: &prefix)
            prefix += self.column
            associatedDataPrefix = prefix
        }
    }

    private var boundColumns = ColumnNameCache<BoundColumn>()

    /// The column's bound names, AAD prefix and primitives: look it up once
    /// (per statement, say) and open many values with
    /// ``open(envelopeBytes:column:table:columnName:rowKey:mode:)``.
    func bound(_ table: String, _ column: String) -> BoundColumn {
        boundColumns.value(table: table, column: column) { BoundColumn(table: table, column: column) }
    }

    /// header ‖ the column's prefix [‖ the row key], into `out`.
    private static func buildAssociatedData(header: UnsafeRawBufferPointer, column: BoundColumn, rowKey: [DatabaseValue]?, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: header)
        out.append(contentsOf: column.associatedDataPrefix)
        guard let rowKey else { return }
        FieldEnvelope.appendBigEndian(UInt32(rowKey.count), to: &out)
        for value in rowKey {
            FieldEnvelope.appendRowKeyPart(value, to: &out)
        }
    }

    /// Takes the scratch buffers out of the instance for one operation (and
    /// puts them back after): working on locals spares a dynamic exclusivity
    /// check on every append.
    private func withScratch<T>(_ body: (inout [UInt8], inout [UInt8]) throws(FieldError) -> T) throws(FieldError) -> T {
        var plaintext = self.plaintext, associatedData = self.associatedData
        self.plaintext = []
        self.associatedData = []
        defer {
            self.plaintext = plaintext
            self.associatedData = associatedData
        }
        return try body(&plaintext, &associatedData)
    }

    private var plaintext: [UInt8] = []
    private var associatedData: [UInt8] = []

    public init(keyring: FieldKeyring) {
        self.keyring = keyring
    }

    // MARK: Subkeys

    private enum Purpose: String {
        case aead = "aes-256-gcm", siv = "aes-256-siv", blindIndex = "hmac-sha256-blind-index"
    }

    /// HKDF-SHA256(master key, salt "strongroom.field.v1",
    /// info purpose || 0x00 || table || 0x00 || column).
    private func derive(_ purpose: Purpose, _ subkey: Subkey, byteCount: Int) throws(FieldError) -> SecureBytes {
        guard let master = keyring.key(subkey.keyID) else {
            throw FieldError(.unknownKeyID, "The keyring has no key \(subkey.keyID).")
        }
        do {
            return try HKDF.deriveKey(from: master, salt: FieldEnvelope.label,
                                      info: Array(purpose.rawValue.utf8) + [0] + subkey.table + [0] + subkey.name, byteCount: byteCount)
        } catch {
            throw FieldError(.keyring, "Deriving a column key failed: \(error.message)")
        }
    }

    private func aead(_ subkey: Subkey) throws(FieldError) -> AESGCM {
        if let cipher = subkey.column.aeads[subkey.keyID] { return cipher }
        do {
            let cipher = try AESGCM(key: derive(.aead, subkey, byteCount: AESGCM.keyByteCount))
            subkey.column.aeads[subkey.keyID] = cipher
            return cipher
        } catch let error as FieldError { throw error } catch { throw FieldError(.keyring, "\(error)") }
    }

    private func siv(_ subkey: Subkey) throws(FieldError) -> AESSIV {
        if let cipher = subkey.column.sivs[subkey.keyID] { return cipher }
        do {
            let cipher = try AESSIV(key: derive(.siv, subkey, byteCount: AESSIV.keyByteCount))
            subkey.column.sivs[subkey.keyID] = cipher
            return cipher
        } catch let error as FieldError { throw error } catch { throw FieldError(.keyring, "\(error)") }
    }

    private func index(_ subkey: Subkey) throws(FieldError) -> HMACSHA256 {
        if let mac = subkey.column.indexes[subkey.keyID] { return mac }
        do {
            let mac = try HMACSHA256(key: derive(.blindIndex, subkey, byteCount: HMACSHA256.byteCount))
            subkey.column.indexes[subkey.keyID] = mac
            return mac
        } catch let error as FieldError { throw error } catch { throw FieldError(.keyring, "\(error)") }
    }

    // MARK: Sealing

    /// The envelope (a BLOB) of `value` under the active key; NULL stays NULL.
    ///
    /// `rowKey` is the row's primary key (its columns in declaration order);
    /// randomized values are bound to it, deterministic ones ignore it.
    public func seal(_ value: DatabaseValue, table: String, column: String, rowKey: [DatabaseValue], mode: SealingMode) throws(FieldError) -> DatabaseValue {
        if case .null = value { return .null }
        if mode != .deterministic && rowKey.contains(where: \.isNull) {
            // 0x00 ‖ u32(0) for every NULL: two rows with NULL keys would be bound alike.
            throw FieldError(.misuse, "\(table).\(column): a row key with NULL cannot bind a sealed value to its row; declare the primary key NOT NULL.", table: table, column: column)
        }
        let names = bound(table, column)
        let keyID = keyring.activeKeyID
        let subkey = Subkey(keyID: keyID, column: names)
        let algorithm: FieldEnvelope.Algorithm = mode == .deterministic ? .aes256SIV : .aes256GCM
        let header: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (FieldEnvelope.version, algorithm.rawValue,
                                                                UInt8(keyID >> 24 & 0xFF), UInt8(keyID >> 16 & 0xFF), UInt8(keyID >> 8 & 0xFF), UInt8(keyID & 0xFF))
        return try withScratch { (plaintext: inout [UInt8], associatedData: inout [UInt8]) throws(FieldError) -> DatabaseValue in
        plaintext.removeAll(keepingCapacity: true)
        FieldEnvelope.appendPlaintext(value, to: &plaintext)
        withUnsafeBytes(of: header) { h in
            Self.buildAssociatedData(header: h, column: names, rowKey: algorithm == .aes256GCM ? rowKey : nil, into: &associatedData)
        }
        let h = FieldEnvelope.headerByteCount, n = plaintext.count
        let total = h + (algorithm == .aes256GCM ? AESGCM.nonceByteCount + n + AESGCM.tagByteCount : AESSIV.tagByteCount + n)
        let envelope: [UInt8]
        do {
            switch algorithm {
            case .aes256GCM:
                let cipher = try aead(subkey)
                envelope = try [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
                    let out = UnsafeMutableRawBufferPointer(buffer)
                    withUnsafeBytes(of: header) { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: h) }
                    try plaintext.withUnsafeBytes { p in
                        try associatedData.withUnsafeBytes { a in
                            let nonceEnd = h + AESGCM.nonceByteCount
                            try cipher.seal(p, authenticating: a, nonce: UnsafeMutableRawBufferPointer(rebasing: out[h..<nonceEnd]),
                                            ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[nonceEnd..<(nonceEnd + n)]),
                                            tag: UnsafeMutableRawBufferPointer(rebasing: out[(nonceEnd + n)...]))
                        }
                    }
                    count = total
                }
            case .aes256SIV:
                let cipher = try siv(subkey)
                envelope = try [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
                    let out = UnsafeMutableRawBufferPointer(buffer)
                    withUnsafeBytes(of: header) { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: h) }
                    try plaintext.withUnsafeBytes { p in
                        try associatedData.withUnsafeBytes { a in
                            let tagEnd = h + AESSIV.tagByteCount
                            try cipher.seal(p, authenticating: a, tag: UnsafeMutableRawBufferPointer(rebasing: out[h..<tagEnd]),
                                            ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[tagEnd...]))
                        }
                    }
                    count = total
                }
            }
        } catch let error as FieldError {
            Self.wipe(&plaintext)
            throw error
        } catch {
            Self.wipe(&plaintext)
            throw FieldError(.misuse, "Sealing \(table).\(column) failed: \(error)", table: table, column: column)
        }
        Self.wipe(&plaintext)
        return .blob(envelope)
        }
    }

    /// The value `envelope` was sealed from; NULL stays NULL.
    ///
    /// - Throws: ``FieldError`` naming the table, column and row:
    ///   ``FieldError/Code/notSealed`` for a value that is not a BLOB,
    ///   ``FieldError/Code/malformedEnvelope``, ``FieldError/Code/unknownKeyID``,
    ///   ``FieldError/Code/tampered``. Never wrong plaintext.
    ///
    /// With `mode`, an envelope of the other algorithm is refused too (a
    /// deterministic envelope, bound to no row, planted in a randomized column).
    public func open(_ envelope: DatabaseValue, table: String, column: String, rowKey: [DatabaseValue], mode: SealingMode? = nil) throws(FieldError) -> DatabaseValue {
        switch envelope {
        case .null:
            return .null
        case .blob(let bytes):
            let result: Result<DatabaseValue, FieldError> = bytes.withUnsafeBytes { raw in
                Result { () throws(FieldError) -> DatabaseValue in
                    try open(envelopeBytes: raw, table: table, column: column, rowKey: rowKey, mode: mode)
                }
            }
            return try result.get()
        default:
            let row = rowKey.map(\.description).joined(separator: ", ")
            throw FieldError(.notSealed, "\(table).\(column), row \(row) holds a plain value, not a sealed one; seal the column (see the migrations guide) or check the column list.", table: table, column: column, row: row)
        }
    }

    /// ``open(_:table:column:rowKey:mode:)`` for an envelope given as its
    /// bytes (SQLite's own buffer, say): nothing is copied before opening.
    public func open(envelopeBytes bytes: UnsafeRawBufferPointer, table: String, column: String, rowKey: [DatabaseValue], mode: SealingMode? = nil) throws(FieldError) -> DatabaseValue {
        try open(envelopeBytes: bytes, column: bound(table, column), table: table, columnName: column, rowKey: rowKey, mode: mode)
    }

    /// The same, for a column already looked up with ``bound(_:_:)``.
    func open(envelopeBytes bytes: UnsafeRawBufferPointer, column names: BoundColumn, table: String, columnName column: String,
              rowKey: [DatabaseValue], mode: SealingMode?) throws(FieldError) -> DatabaseValue {
        // Only an error names the row: built then, not for every value.
        var row: String { rowKey.map(\.description).joined(separator: ", ") }
        var place: String { "\(table).\(column), row \(row)" }
        let h = FieldEnvelope.headerByteCount
        guard bytes.count >= h, bytes[0] == FieldEnvelope.version, let algorithm = FieldEnvelope.Algorithm(rawValue: bytes[1]) else {
            throw FieldError(.malformedEnvelope, "\(place) is not a Strongroom envelope (format \(FieldEnvelope.version)): a plain BLOB, or a damaged or truncated envelope.", table: table, column: column, row: row)
        }
        if let mode, (mode == .deterministic) != (algorithm == .aes256SIV) {
            throw FieldError(.tampered, "\(place) holds a \(algorithm == .aes256SIV ? "deterministic" : "randomized") envelope where the column is sealed \(mode.rawValue): it was put there from elsewhere.", table: table, column: column, row: row)
        }
        let keyID = UInt32(bytes[2]) << 24 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 8 | UInt32(bytes[5])
        let known = (algorithm == .aes256GCM ? names.aeads[keyID] != nil : names.sivs[keyID] != nil) || keyring.key(keyID) != nil
        guard known else {
            throw FieldError(.unknownKeyID, "\(place) was sealed under key \(keyID), which this keyring does not hold (it has \(keyring.keyIDs.map(String.init).joined(separator: ", "))); use the keyring it was sealed with.", table: table, column: column, row: row)
        }
        let overhead = algorithm == .aes256GCM ? AESGCM.nonceByteCount + AESGCM.tagByteCount : AESSIV.tagByteCount
        guard bytes.count > h + overhead else {
            throw FieldError(.malformedEnvelope, "\(place) is a truncated envelope (\(bytes.count) bytes).", table: table, column: column, row: row)
        }
        let subkey = Subkey(keyID: keyID, column: names)
        return try withScratch { (plaintext: inout [UInt8], associatedData: inout [UInt8]) throws(FieldError) -> DatabaseValue in
            Self.buildAssociatedData(header: UnsafeRawBufferPointer(rebasing: bytes[0..<h]), column: names, rowKey: algorithm == .aes256GCM ? rowKey : nil, into: &associatedData)
            let n = bytes.count - h - overhead
            plaintext.removeAll(keepingCapacity: true)
            plaintext.append(contentsOf: repeatElement(0, count: n))
            do {
                switch algorithm {
                case .aes256GCM:
                    let cipher = try aead(subkey)
                    let all = bytes
                    try associatedData.withUnsafeBytes { a in
                        try plaintext.withUnsafeMutableBytes { p in
                            let nonceEnd = h + AESGCM.nonceByteCount
                            try cipher.open(UnsafeRawBufferPointer(rebasing: all[nonceEnd..<(nonceEnd + n)]),
                                            nonce: UnsafeRawBufferPointer(rebasing: all[h..<nonceEnd]),
                                            tag: UnsafeRawBufferPointer(rebasing: all[(nonceEnd + n)...]), authenticating: a, into: p)
                        }
                    }
                case .aes256SIV:
                    let cipher = try siv(subkey)
                    let all = bytes
                    try associatedData.withUnsafeBytes { a in
                        try plaintext.withUnsafeMutableBytes { p in
                            let tagEnd = h + AESSIV.tagByteCount
                            try cipher.open(tag: UnsafeRawBufferPointer(rebasing: all[h..<tagEnd]),
                                            ciphertext: UnsafeRawBufferPointer(rebasing: all[tagEnd...]), authenticating: a, into: p)
                        }
                    }
                }
            } catch let error as FieldError {
                throw error
            } catch {
                throw FieldError(.tampered, "\(place) does not authenticate: it was changed, moved from another row or column, or sealed with another keyring.", table: table, column: column, row: row)
            }
            let value = plaintext.withUnsafeBytes { FieldEnvelope.decodePlaintext($0) }
            Self.wipe(&plaintext)
            guard let value else {
                throw FieldError(.malformedEnvelope, "\(place) authenticates but holds no value Strongroom writes.", table: table, column: column, row: row)
            }
            return value
        }
    }

    /// The key id an envelope was sealed under, or nil for NULL and values
    /// that are not envelopes.
    public static func keyID(of envelope: DatabaseValue) -> UInt32? {
        guard case .blob(let b) = envelope, b.count >= FieldEnvelope.headerByteCount, b[0] == FieldEnvelope.version,
              FieldEnvelope.Algorithm(rawValue: b[1]) != nil else { return nil }
        return UInt32(b[2]) << 24 | UInt32(b[3]) << 16 | UInt32(b[4]) << 8 | UInt32(b[5])
    }

    // MARK: Blind indexes

    /// The blind index of `value` for `table.column` under key `keyID` (the
    /// active key by default): key id (4 bytes) || HMAC-SHA256 of the
    /// value's plaintext encoding, truncated to 16 bytes. NULL stays NULL.
    ///
    /// ```swift
    /// let probe = try cipher.blindIndex(.text("ada@example.com"), table: "customer", column: "email")
    /// let row = try db.fetchOne(sql: "SELECT * FROM customer WHERE email_index = ?", arguments: [probe])
    /// ```
    public func blindIndex(_ value: DatabaseValue, table: String, column: String, keyID: UInt32? = nil) throws(FieldError) -> DatabaseValue {
        if case .null = value { return .null }
        let id = keyID ?? keyring.activeKeyID
        let mac = try index(Subkey(keyID: id, column: bound(table, column)))
        plaintext.removeAll(keepingCapacity: true)
        FieldEnvelope.appendPlaintext(value, to: &plaintext)
        var tag = [UInt8](repeating: 0, count: HMACSHA256.byteCount)
        plaintext.withUnsafeBytes { p in tag.withUnsafeMutableBytes { mac.authenticationCode(for: p, into: $0) } }
        Self.wipe(&plaintext)
        var out: [UInt8] = []
        out.reserveCapacity(4 + FieldEnvelope.blindIndexTagByteCount)
        FieldEnvelope.appendBigEndian(id, to: &out)
        out.append(contentsOf: tag.prefix(FieldEnvelope.blindIndexTagByteCount))
        return .blob(out)
    }

    /// Zeroes the scratch buffer that held a plaintext.
    private static func wipe(_ buffer: inout [UInt8]) {
        buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
