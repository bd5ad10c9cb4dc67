/// What a connection's statements need to know of it on every step, held
/// strongly by each: reading it costs no retain of the connection (a
/// statement's `unowned` reference to its connection costs a retain and a
/// release on every access).
///
/// Its flag is written once, on the connection's thread, when the handle
/// closes; it is read without exclusivity checks, which would cost a
/// runtime call per row (a connection is used by one thread at a time).
final class ConnectionState {
    @exclusivity(unchecked) var isClosed = false
}
