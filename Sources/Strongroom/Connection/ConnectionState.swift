/// What a connection's statements need to know of it on every step, held
/// strongly by each: reading it costs no retain of the connection (a
/// statement's `unowned` reference to its connection costs a retain and a
/// release on every access).
///
/// Its flag is written once, when the handle closes (by `close()` or the
/// connection's deinit, on whichever thread runs it); it is read without
/// runtime exclusivity checks, which would cost a call per row: every
/// access is a single load or store, and statements are not `Sendable`.
final class ConnectionState {
    @exclusivity(unchecked) var isClosed = false
}
