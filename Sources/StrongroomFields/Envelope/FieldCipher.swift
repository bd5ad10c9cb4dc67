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
    /// What every value is bound to beyond table, column and row; nil for nothing more.
    public let context: FieldContext?
    /// `u32(len) ‖ context`, or nothing: appended to the associated data
    /// and put before a blind index's plaintext.
    let contextPart: [UInt8]

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
        let aeads = KeyedPrimitives<AESGCM>()
        let sivs = KeyedPrimitives<AESSIV>()
        let indexes = KeyedPrimitives<HMACSHA256>()
        /// For a row signature's column (``RowSignature``): its MAC keys.
        let rowSigners = KeyedPrimitives<HMACSHA256>()
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

    /// One kind of primitive of a column, by key id; the last one used is
    /// kept aside, since nearly every value of a column is under one key.
    final class KeyedPrimitives<Primitive> {
        private var last: (keyID: UInt32, primitive: Primitive)?
        private var byKeyID: [UInt32: Primitive] = [:]

        func contains(_ keyID: UInt32) -> Bool {
            last?.keyID == keyID || byKeyID[keyID] != nil
        }

        /// The primitive for `keyID`, made by `make` the first time.
        func primitive(_ keyID: UInt32, _ make: () throws(FieldError) -> Primitive) throws(FieldError) -> Primitive {
            if let last, last.keyID == keyID { return last.primitive }
            let primitive: Primitive
            if let known = byKeyID[keyID] {
                primitive = known
            } else {
                primitive = try make()
                byKeyID[keyID] = primitive
            }
            last = (keyID, primitive)
            return primitive
        }
    }

    private var boundColumns = ColumnNameCache<BoundColumn>()

    /// Each blind index's HKDF info and keys (``BlindIndex``), made on first use.
    private var blindIndexKeys: [BlindIndex: IndexKeys] = [:]

    func indexKeys(_ index: BlindIndex) -> IndexKeys {
        if let known = blindIndexKeys[index] { return known }
        let keys = IndexKeys(info: index.derivationInfo)
        blindIndexKeys[index] = keys
        return keys
    }

    /// The column's bound names, AAD prefix and primitives: look it up once
    /// (per statement, say) and open many values with
    /// ``open(envelopeBytes:column:table:columnName:rowKey:mode:)``.
    func bound(_ table: String, _ column: String) -> BoundColumn {
        boundColumns.value(table: table, column: column) { BoundColumn(table: table, column: column) }
    }

    /// header ‖ the column's prefix [‖ the row key] [‖ the context]: the associated data.
    private func associatedDataByteCount(column: BoundColumn, rowKey: [DatabaseValue]?) -> Int {
        FieldEnvelope.headerByteCount + column.associatedDataPrefix.count + (rowKey.map(FieldEnvelope.rowKeyByteCount) ?? 0) + contextPart.count
    }

    private func writeAssociatedData(header: UnsafeRawBufferPointer, column: BoundColumn, rowKey: [DatabaseValue]?, to out: inout FieldEnvelope.Writer) {
        out.write(header)
        column.associatedDataPrefix.withUnsafeBytes { out.write($0) }
        if let rowKey { FieldEnvelope.writeRowKey(rowKey, to: &out) }
        if !contextPart.isEmpty { contextPart.withUnsafeBytes { out.write($0) } }
    }

    /// Scratch memory for one value's associated data and its plaintext,
    /// kept between values: grown when a value needs more, given back after
    /// a large one. Plaintext is zeroed after each use (`finishScratch`).
    private var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: smallScratchByteCount, alignment: 16)
    private static let smallScratchByteCount = 256
    private static let largeScratchByteCount = 64 * 1024

    /// The first `byteCount` bytes of the scratch.
    func scratch(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        if scratch.count < byteCount {
            SecureMemory.zero(scratch)
            scratch.deallocate()
            let grown = byteCount > Self.largeScratchByteCount ? byteCount : max(byteCount, 2 * scratch.count)
            scratch = .allocate(byteCount: grown, alignment: 16)
        }
        return UnsafeMutableRawBufferPointer(rebasing: scratch[0..<byteCount])
    }

    /// Zeroes the plaintext held in the scratch, and gives a large scratch back.
    func finishScratch(plaintext: UnsafeMutableRawBufferPointer) {
        SecureMemory.zero(plaintext)
        if scratch.count > Self.largeScratchByteCount {
            SecureMemory.zero(scratch)
            scratch.deallocate()
            scratch = .allocate(byteCount: Self.smallScratchByteCount, alignment: 16)
        }
    }

    deinit {
        SecureMemory.zero(scratch)
        scratch.deallocate()
    }

    /// Set when the database this cipher serves records field keys but not
    /// its keyring's active key (``FieldKeyCheck``): why nothing is sealed.
    var unknownActiveKey: String?

    /// With ``unknownActiveKey``: true once the database records the active
    /// key after all (an insert, rotation or `FieldKeyCheck.recordActiveKey`
    /// on the connection, in this transaction or an earlier one), asked again
    /// at each seal, so that a rollback that takes the record back also takes
    /// sealing under the key back.
    var activeKeyRecorded: (() -> Bool)?

    /// A cipher for `keyring`, binding values to `context` too when one is
    /// given (see ``FieldContext``); derives column keys on first use.
    public init(keyring: FieldKeyring, context: FieldContext? = nil) {
        self.keyring = keyring
        self.context = context
        self.contextPart = context?.boundBytes ?? []
    }

    // MARK: Subkeys

    private enum Purpose: String {
        case aead = "aes-256-gcm", siv = "aes-256-siv", blindIndex = "hmac-sha256-blind-index", rowSignature = "hmac-sha256-row-signature"
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
        try subkey.column.aeads.primitive(subkey.keyID) { () throws(FieldError) in
            try Self.making { try AESGCM(key: derive(.aead, subkey, byteCount: AESGCM.keyByteCount)) }
        }
    }

    private func siv(_ subkey: Subkey) throws(FieldError) -> AESSIV {
        try subkey.column.sivs.primitive(subkey.keyID) { () throws(FieldError) in
            try Self.making { try AESSIV(key: derive(.siv, subkey, byteCount: AESSIV.keyByteCount)) }
        }
    }

    private func index(_ subkey: Subkey) throws(FieldError) -> HMACSHA256 {
        try subkey.column.indexes.primitive(subkey.keyID) { () throws(FieldError) in
            try Self.making { try HMACSHA256(key: derive(.blindIndex, subkey, byteCount: HMACSHA256.byteCount)) }
        }
    }

    /// The MAC key of the row signatures of `table` held in `column` (a
    /// ``SignedRow``'s signature column) under `keyID`:
    /// HKDF-SHA256 with info "hmac-sha256-row-signature" || 0x00 || table
    /// || 0x00 || column.
    func rowSigner(_ column: BoundColumn, keyID: UInt32) throws(FieldError) -> HMACSHA256 {
        let subkey = Subkey(keyID: keyID, column: column)
        return try column.rowSigners.primitive(keyID) { () throws(FieldError) in
            try Self.making { try HMACSHA256(key: derive(.rowSignature, subkey, byteCount: HMACSHA256.byteCount)) }
        }
    }

    /// A primitive's constructor, its `CryptoError` as a keyring error.
    static func making<P>(_ make: () throws -> P) throws(FieldError) -> P {
        do {
            return try make()
        } catch let error as FieldError {
            throw error
        } catch {
            throw FieldError(.keyring, "\(error)")
        }
    }

    // MARK: Sealing

    /// The envelope (a BLOB) of `value` under the active key; NULL stays NULL.
    ///
    /// `rowKey` is the row's primary key (its columns in declaration order);
    /// randomized values are bound to it, deterministic ones ignore it.
    public func seal(_ value: DatabaseValue, table: String, column: String, rowKey: [DatabaseValue], mode: SealingMode) throws(FieldError) -> DatabaseValue {
        if case .null = value { return .null }
        if let unknownActiveKey, activeKeyRecorded?() != true {
            throw FieldError(.keyring, unknownActiveKey, table: table, column: column)
        }
        if mode != .deterministic && rowKey.isEmpty {
            // Bound to no row, such a value would open in any row it was copied to.
            throw FieldError(.misuse, "\(table).\(column): a \(mode.rawValue) value is bound to its row's PRIMARY KEY, and no key was given (the table declares no PRIMARY KEY, or the call passed no key columns); declare a primary key, or seal the column deterministic.", table: table, column: column)
        }
        if mode != .deterministic && rowKey.contains(where: { $0.isNull }) {
            // 0x00 ‖ u32(0) for every NULL: two rows with NULL keys would be bound alike.
            throw FieldError(.misuse, "\(table).\(column): a row key with NULL cannot bind a sealed value to its row; declare the primary key NOT NULL.", table: table, column: column)
        }
        return try seal(value, table: table, column: column, rowKey: rowKey, mode: mode, keyID: keyring.activeKeyID)
    }

    /// The deterministic envelope of `value` under key `keyID`: what a row
    /// sealed under that key holds, to look it up by (NULL stays NULL).
    func deterministicProbe(_ value: DatabaseValue, table: String, column: String, keyID: UInt32) throws(FieldError) -> DatabaseValue {
        if case .null = value { return .null }
        return try seal(value, table: table, column: column, rowKey: [], mode: .deterministic, keyID: keyID)
    }

    private func seal(_ value: DatabaseValue, table: String, column: String, rowKey: [DatabaseValue], mode: SealingMode, keyID: UInt32) throws(FieldError) -> DatabaseValue {
        let names = bound(table, column)
        let subkey = Subkey(keyID: keyID, column: names)
        let algorithm: FieldEnvelope.Algorithm = mode == .deterministic ? .aes256SIV : .aes256GCM
        let header: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (FieldEnvelope.version, algorithm.rawValue,
                                                                UInt8(keyID >> 24 & 0xFF), UInt8(keyID >> 16 & 0xFF), UInt8(keyID >> 8 & 0xFF), UInt8(keyID & 0xFF))
        let boundRowKey = algorithm == .aes256GCM ? rowKey : nil
        let h = FieldEnvelope.headerByteCount, n = FieldEnvelope.plaintextByteCount(value)
        let a = associatedDataByteCount(column: names, rowKey: boundRowKey)
        let total = h + (algorithm == .aes256GCM ? AESGCM.nonceByteCount + n + AESGCM.tagByteCount : AESSIV.tagByteCount + n)
        let scratch = scratch(byteCount: a + n)
        defer { finishScratch(plaintext: UnsafeMutableRawBufferPointer(rebasing: scratch[a...])) }
        var writer = FieldEnvelope.Writer(scratch)
        withUnsafeBytes(of: header) { writeAssociatedData(header: $0, column: names, rowKey: boundRowKey, to: &writer) }
        FieldEnvelope.writePlaintext(value, to: &writer)
        precondition(writer.isAtEnd, "an encoding is shorter than its byte count")
        let associatedData = UnsafeRawBufferPointer(rebasing: scratch[0..<a]), plaintext = UnsafeRawBufferPointer(rebasing: scratch[a...])
        let envelope: [UInt8]
        do {
            switch algorithm {
            case .aes256GCM:
                let cipher = try aead(subkey)
                // Zero-filled, not uninitialized: the latter looks up Array's
                // generic metadata on every call.
                var out = [UInt8](repeating: 0, count: total)
                try out.withUnsafeMutableBytes { out in
                    out.baseAddress!.copyMemory(from: scratch.baseAddress!, byteCount: h)
                    let nonceEnd = h + AESGCM.nonceByteCount
                    try cipher.seal(plaintext, authenticating: associatedData, nonce: UnsafeMutableRawBufferPointer(rebasing: out[h..<nonceEnd]),
                                    ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[nonceEnd..<(nonceEnd + n)]),
                                    tag: UnsafeMutableRawBufferPointer(rebasing: out[(nonceEnd + n)...]))
                }
                envelope = out
            case .aes256SIV:
                let cipher = try siv(subkey)
                var out = [UInt8](repeating: 0, count: total)
                try out.withUnsafeMutableBytes { out in
                    out.baseAddress!.copyMemory(from: scratch.baseAddress!, byteCount: h)
                    let tagEnd = h + AESSIV.tagByteCount
                    try cipher.seal(plaintext, authenticating: associatedData, tag: UnsafeMutableRawBufferPointer(rebasing: out[h..<tagEnd]),
                                    ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[tagEnd...]))
                }
                envelope = out
            }
        } catch let error as FieldError {
            throw error
        } catch {
            throw FieldError(.misuse, "Sealing \(table).\(column) failed: \(error)", table: table, column: column)
        }
        return .blob(envelope)
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
            throw FieldError(.notSealed, "\(Self.place(table, column, rowKey)) holds a plain value, not a sealed one; seal the column (see the migrations guide) or check the column list.", table: table, column: column, row: Self.row(rowKey))
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
        var row: String? { Self.row(rowKey) }
        var place: String { Self.place(table, column, rowKey) }
        let h = FieldEnvelope.headerByteCount
        guard bytes.count >= h, bytes[0] == FieldEnvelope.version, let algorithm = FieldEnvelope.Algorithm(rawValue: bytes[1]) else {
            throw FieldError(.malformedEnvelope, "\(place) is not a Strongroom envelope (format \(FieldEnvelope.version)): a plain BLOB, or a damaged or truncated envelope.", table: table, column: column, row: row)
        }
        if let mode, (mode == .deterministic) != (algorithm == .aes256SIV) {
            throw FieldError(.tampered, "\(place) holds a \(algorithm == .aes256SIV ? "deterministic" : "randomized") envelope where the column is sealed \(mode.rawValue): it was put there from elsewhere.", table: table, column: column, row: row)
        }
        let keyID = UInt32(bytes[2]) << 24 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 8 | UInt32(bytes[5])
        let known = (algorithm == .aes256GCM ? names.aeads.contains(keyID) : names.sivs.contains(keyID)) || keyring.key(keyID) != nil
        guard known else {
            throw FieldError(.unknownKeyID, "\(place) was sealed under key \(keyID), which this keyring does not hold (it has \(keyring.keyIDs.map(String.init).joined(separator: ", "))); use the keyring it was sealed with.", table: table, column: column, row: row)
        }
        let overhead = algorithm == .aes256GCM ? AESGCM.nonceByteCount + AESGCM.tagByteCount : AESSIV.tagByteCount
        guard bytes.count > h + overhead else {
            throw FieldError(.malformedEnvelope, "\(place) is a truncated envelope (\(bytes.count) bytes).", table: table, column: column, row: row)
        }
        let subkey = Subkey(keyID: keyID, column: names)
        let boundRowKey = algorithm == .aes256GCM ? rowKey : nil
        let n = bytes.count - h - overhead
        let a = associatedDataByteCount(column: names, rowKey: boundRowKey)
        let scratch = scratch(byteCount: a + n)
        let associatedData = UnsafeRawBufferPointer(rebasing: scratch[0..<a]), plaintext = UnsafeMutableRawBufferPointer(rebasing: scratch[a...])
        defer { finishScratch(plaintext: plaintext) }
        var writer = FieldEnvelope.Writer(UnsafeMutableRawBufferPointer(mutating: associatedData))
        writeAssociatedData(header: UnsafeRawBufferPointer(rebasing: bytes[0..<h]), column: names, rowKey: boundRowKey, to: &writer)
        precondition(writer.isAtEnd, "an encoding is shorter than its byte count")
        do {
            switch algorithm {
            case .aes256GCM:
                let cipher = try aead(subkey)
                let nonceEnd = h + AESGCM.nonceByteCount
                try cipher.open(UnsafeRawBufferPointer(rebasing: bytes[nonceEnd..<(nonceEnd + n)]),
                                nonce: UnsafeRawBufferPointer(rebasing: bytes[h..<nonceEnd]),
                                tag: UnsafeRawBufferPointer(rebasing: bytes[(nonceEnd + n)...]), authenticating: associatedData, into: plaintext)
            case .aes256SIV:
                let cipher = try siv(subkey)
                let tagEnd = h + AESSIV.tagByteCount
                try cipher.open(tag: UnsafeRawBufferPointer(rebasing: bytes[h..<tagEnd]),
                                ciphertext: UnsafeRawBufferPointer(rebasing: bytes[tagEnd...]), authenticating: associatedData, into: plaintext)
            }
        } catch let error as FieldError {
            throw error
        } catch {
            throw FieldError(.tampered, "\(place) does not authenticate: it was changed, moved from another row or column, or sealed with another keyring.", table: table, column: column, row: row)
        }
        guard let value = FieldEnvelope.decodePlaintext(UnsafeRawBufferPointer(plaintext)) else {
            throw FieldError(.malformedEnvelope, "\(place) authenticates but holds no value Strongroom writes.", table: table, column: column, row: row)
        }
        return value
    }

    /// A row named by its key's values, or nil without a row key (a
    /// deterministic value is bound to no row): never a blank.
    static func row(_ rowKey: [DatabaseValue]) -> String? {
        rowKey.isEmpty ? nil : rowKey.map(\.description).joined(separator: ", ")
    }

    /// "customer.email, row 7", or "customer.email" without a row key.
    static func place(_ table: String, _ column: String, _ rowKey: [DatabaseValue]) -> String {
        row(rowKey).map { "\(table).\(column), row \($0)" } ?? "\(table).\(column)"
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
    /// value's plaintext encoding (after the context, when there is one),
    /// truncated to 16 bytes. NULL stays NULL.
    ///
    /// ```swift
    /// let probe = try cipher.blindIndex(.text("ada@example.com"), table: "customer", column: "email")
    /// let row = try db.fetchOne(sql: "SELECT * FROM customer WHERE email_index = ?", arguments: [probe])
    /// ```
    public func blindIndex(_ value: DatabaseValue, table: String, column: String, keyID: UInt32? = nil) throws(FieldError) -> DatabaseValue {
        if case .null = value { return .null }
        let id = keyID ?? keyring.activeKeyID
        let mac = try index(Subkey(keyID: id, column: bound(table, column)))
        var out = [UInt8]()
        out.reserveCapacity(4 + FieldEnvelope.blindIndexTagByteCount)
        FieldEnvelope.appendBigEndian(id, to: &out)
        let n = contextPart.count + FieldEnvelope.plaintextByteCount(value)
        let scratch = scratch(byteCount: n + HMACSHA256.byteCount)
        defer { finishScratch(plaintext: scratch) }
        var writer = FieldEnvelope.Writer(UnsafeMutableRawBufferPointer(rebasing: scratch[0..<n]))
        if !contextPart.isEmpty { contextPart.withUnsafeBytes { writer.write($0) } }
        FieldEnvelope.writePlaintext(value, to: &writer)
        precondition(writer.isAtEnd, "an encoding is shorter than its byte count")
        let tag = UnsafeMutableRawBufferPointer(rebasing: scratch[n...])
        mac.authenticationCode(for: UnsafeRawBufferPointer(rebasing: scratch[0..<n]), into: tag)
        out.append(contentsOf: tag.prefix(FieldEnvelope.blindIndexTagByteCount))
        return .blob(out)
    }
}
