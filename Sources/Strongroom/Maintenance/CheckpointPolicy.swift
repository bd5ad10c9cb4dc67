/// How a ``DatabasePool`` keeps its `-wal` file from growing without bound.
///
/// SQLite checkpoints the write-ahead log by itself (`PASSIVE`, every 1,000
/// pages; in a pool, on a connection and thread of the pool's own rather
/// than in the writer's commit), and starts it over from its beginning
/// once every frame is copied back and no reader still reads it. A pool whose readers always
/// overlap never gives it that moment: each checkpoint stops at the
/// oldest reader's snapshot, the log never starts over, and the `-wal`
/// grows for as long as the load lasts (a known SQLite hazard; see
/// <doc:ServingRequests>).
///
/// Past ``walSizeLimit``, the pool's writer truncates the log after its
/// commit, once the caller has its result. It makes the moment SQLite
/// needs: a background checkpoint in progress gets up to ``maximumWait``
/// to end, new reads of the pool wait, the reads running get what is left
/// of ``maximumWait`` to end, then `PRAGMA wal_checkpoint(TRUNCATE)` copies
/// every frame back and truncates the file to zero bytes, and the reads
/// waiting go on (readers that keep coming would otherwise keep the log's
/// read locks forever). The next write waits for the checkpoint. When a
/// read outlasts ``maximumWait`` (an export, a report), or another process
/// still reads the log, the checkpoint gives up, and it is not tried again
/// for twice ``maximumWait``: one long read costs the writer at most a third
/// of its time, and the `-wal` grows until that read ends (and until the
/// next try, up to twice ``maximumWait`` later). The bound is
/// twice the limit while every read ends within ``maximumWait``, however
/// many readers there are (measured with 8 readers of 100 ms always active,
/// and with 16 async readers back to back: the peak was the limit plus one
/// transaction); reads that keep outlasting it can keep the `-wal` growing
/// for as long as they come (see <doc:ServingRequests>).
///
/// ```swift
/// var configuration = Configuration(key: key)
/// configuration.checkpointPolicy = CheckpointPolicy(walSizeLimit: 64 << 20)
/// ```
public struct CheckpointPolicy: Sendable, Hashable {
    /// The `-wal` size, in bytes, past which the writer truncates the log.
    /// `nil`: SQLite's automatic checkpoints only (the `-wal` may grow
    /// without bound under constant reads).
    public var walSizeLimit: Int?

    /// The longest the writer waits for old readers in one checkpoint.
    /// Default 1 s.
    public var maximumWait: Duration

    /// A policy that truncates the log past `walSizeLimit` bytes, waiting
    /// up to `maximumWait` for old readers each time.
    public init(walSizeLimit: Int?, maximumWait: Duration = .seconds(1)) {
        self.walSizeLimit = walSizeLimit
        self.maximumWait = maximumWait
    }

    /// Truncates the log past 16 MiB: four times the size SQLite's own
    /// checkpoints keep it at when readers leave them room, so it runs only
    /// when they do not.
    public static let `default` = CheckpointPolicy(walSizeLimit: 16 << 20)

    /// SQLite's automatic checkpoints only.
    public static let automaticOnly = CheckpointPolicy(walSizeLimit: nil)
}
