internal import CSQLCipher
import Foundation
import Logging

/// A pool's automatic checkpoints, off the writer's path.
///
/// SQLite checkpoints a WAL database from the connection that commits: once
/// the log holds 1,000 pages, the commit that passed them copies them back
/// into the database before it returns, and it is the writer that waits. A
/// pool turns that off on its writer (a `sqlite3_wal_hook` of its own takes
/// SQLite's place) and runs the same `PASSIVE` checkpoint on a connection and
/// thread of its own: the writer goes on committing while the pages are
/// copied. A checkpoint copies the log's frames as they are, ciphertext to
/// ciphertext; it decrypts nothing.
///
/// Truncating the log (``CheckpointPolicy``) stays with the writer, which
/// waits for a checkpoint in progress first: SQLite lets one checkpoint run
/// at a time, and refuses a second without waiting.
final class WALCheckpointer: @unchecked Sendable {
    // Sendable: `scheduled`, `closed`, `keyIsKnown`, `configuration` and
    // `generation` are guarded by `state`; `connection` and
    // `openedGeneration` by `running`, which is held for each checkpoint.
    private let state = NSLock()
    private var scheduled = false
    private var closed = false
    /// What the next connection opens with, and how many times it changed.
    private var configuration: Configuration
    private var generation = 0
    /// False from a rekey until the pool knows the key again: no connection opens.
    private var keyIsKnown = true
    private let running = NSLock()
    private var connection: Connection?
    private var openedGeneration = 0
    private let thread = ConnectionThread(name: "strongroom-ckpt")
    private let path: String
    private let logger: Logger

    /// The log's size in pages past which a commit asks for a checkpoint:
    /// SQLite's own default (`wal_autocheckpoint`).
    static let framesPerCheckpoint: Int32 = 1_000

    /// `configuration`: the pool's readers' (the key they open with),
    /// opened for writing, since a checkpoint writes the database file.
    init(path: String, configuration: Configuration) {
        var configuration = configuration
        configuration.readOnly = false
        configuration.createIfMissing = false
        configuration.keepsJournalMode = true
        self.path = path
        self.configuration = configuration
        self.logger = configuration.logger
    }

    deinit { thread.stop() }

    /// The key to open with from now on (the readers' key, set again after
    /// a rekey): a connection still open on another is replaced at the next
    /// checkpoint.
    func use(_ key: DatabaseKey?) {
        state.lock()
        configuration.encryption = key.map { .encrypted($0) } ?? .plaintext
        generation += 1
        keyIsKnown = true
        state.unlock()
    }

    /// Runs a rekey: waits for the checkpoint in progress, closes the
    /// connection (no connection stays open on the old key), runs `body`
    /// with no checkpoint beside it, and opens none until ``use(_:)`` gives
    /// the key that opens the file now.
    func rekeying<T>(_ body: () throws -> T) rethrows -> T {
        running.lock()
        defer { running.unlock() }
        connection = nil
        state.lock()
        keyIsKnown = false
        state.unlock()
        return try body()
    }

    /// Takes SQLite's automatic checkpoints off `writer`: after each of its
    /// commits, a log of `framesPerCheckpoint` pages or more gets a
    /// checkpoint on this checkpointer's thread. Call again after the writer
    /// reopens. (`sqlite3_wal_hook` takes the place of SQLite's own hook, so
    /// the writer's `PRAGMA wal_autocheckpoint` reads 0.)
    func watch(_ writer: Connection) {
        writer.walHookTarget = self
        sqlite3_wal_hook(writer.handle, { context, db, name, frames in
            guard let context else { return SQLITE_OK }
            if let name, strcmp(name, "main") != 0 {
                // An attached WAL database: checkpointed in the commit, as
                // SQLite's own hook does; only `main` has a connection here.
                if frames >= WALCheckpointer.framesPerCheckpoint { sqlite3_wal_checkpoint(db, name) }
                return SQLITE_OK
            }
            Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: frames)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// On the writer's thread, inside its commit: schedules one checkpoint
    /// unless one is waiting to run already.
    private func committed(frames: Int32) {
        guard frames >= Self.framesPerCheckpoint else { return }
        state.lock()
        guard !scheduled, !closed else {
            state.unlock()
            return
        }
        scheduled = true
        state.unlock()
        thread.submit { [self] in
            running.lock()
            defer { running.unlock() }
            checkpoint()
        }
    }

    /// Holding `running`: a `PASSIVE` checkpoint, which waits for nobody.
    /// A failure is logged and left for a later commit to set off again, as
    /// SQLite does with its own.
    private func checkpoint() {
        state.lock()
        scheduled = false
        let (isClosed, keyIsKnown, configuration, generation) = (closed, self.keyIsKnown, self.configuration, self.generation)
        state.unlock()
        guard !isClosed, keyIsKnown else { return }
        if openedGeneration != generation { connection = nil }
        do {
            let db = try connection ?? Connection(path: path, configuration: configuration)
            connection = db
            openedGeneration = generation
            let code = sqlite3_wal_checkpoint_v2(db.handle, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            if code != SQLITE_OK && code != SQLITE_BUSY {
                connection = nil // the next one opens afresh
                logger.notice("a background checkpoint failed; a later commit sets it off again", metadata: ["path": "\(path)", "sqlite_code": "\(code)"])
            }
        } catch {
            logger.notice("the checkpoint connection did not open; a later commit tries again", metadata: ["path": "\(path)", "reason": "\((error as? StrongroomError)?.code.rawValue ?? "error")"])
        }
    }

    /// Runs `body` with no checkpoint of this checkpointer in progress
    /// (SQLite refuses a second checkpoint while one runs, without waiting).
    func excluding<T>(_ body: () throws -> T) rethrows -> T {
        running.lock()
        defer { running.unlock() }
        return try body()
    }

    /// Waits up to `wait` for the checkpoint in progress to end; true when
    /// none runs now, until ``endClaim()``. For the policy's truncation,
    /// which must not wait without bound.
    func claim(within wait: Duration) -> Bool {
        running.lock(before: wait.dateFromNow)
    }

    /// Ends a successful ``claim(within:)``.
    func endClaim() {
        running.unlock()
    }

    /// Once the checkpoint in progress, if any, is done: closes the
    /// connection; later commits set off nothing. Call before the writer
    /// closes, which then checkpoints what is left as the last connection,
    /// and when the writer finds its files moved (no connection may keep
    /// the old `-wal` open).
    func close() {
        state.lock()
        closed = true
        state.unlock()
        running.lock()
        connection = nil
        running.unlock()
        thread.stop()
    }
}
