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
/// A log starts again from its beginning only when a write transaction
/// begins with every frame copied back. Under a steady stream of commits, a
/// checkpoint on another thread nearly always overlaps some, and ends with
/// the frames they added left over. Scheduled again by each commit, as
/// SQLite's own hook is, checkpoint after checkpoint copied a handful of
/// frames with two `fdatasync`s each, until one fell between two commits:
/// about 11 a cycle, and one page written back for each frame logged. Now
/// commits schedule nothing while a checkpoint is waiting or running; one
/// that ends with many frames left over runs again at once, and one that
/// ends with a few (``catchUpFrames``) leaves them to the writer, which
/// copies them at its next commit, with no commit beside it; the
/// transaction after that starts the log again. The writer then waits for
/// that checkpoint's `fsync` of the database file, so it does so only while
/// the last checkpoint known to have synced it took under
/// ``quickCheckpoint``: on a disk slow to sync, commits never wait for a
/// checkpoint, and the log starts again when a background checkpoint falls
/// between two commits, as before. (A checkpoint syncs the database file
/// only when it reaches the log's end, which SQLite does not report: a
/// background one did when the log starts again after it; the writer's own
/// did when it copied every frame, since no commit ran beside it.)
///
/// Truncating the log (``CheckpointPolicy``) stays with the writer, which
/// waits for a checkpoint in progress first: SQLite lets one checkpoint run
/// at a time, and refuses a second without waiting.
final class WALCheckpointer: @unchecked Sendable {
    // Sendable: `scheduled`, `closed`, `keyIsKnown`, `configuration`,
    // `generation`, `loggedFrames`, `copiedFrames`, `leftBehind`,
    // `syncsQuickly` and `lastBackgroundTook` are guarded by `state`;
    // `connection` and `openedGeneration` by `running`, which is held for
    // each checkpoint.
    private let state = NSLock()
    /// True from the commit that asks for a background checkpoint until it ends.
    private var scheduled = false
    /// The log's size in frames at the writer's last commit.
    private var loggedFrames: Int32 = 0
    /// The frames copied back when the last background checkpoint ended.
    private var copiedFrames: Int32 = 0
    /// True when the last background checkpoint left a few frames for the
    /// writer's next commit to copy.
    private var leftBehind = false
    /// True while the last checkpoint known to have synced the database
    /// file (one that reached the log's end) took under ``quickCheckpoint``.
    private var syncsQuickly = false
    /// How long the last background checkpoint took, when it copied frames
    /// and every frame of the log as it found it: it synced the database
    /// file if the log starts again before another checkpoint runs.
    private var lastBackgroundTook: Duration?
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
    private let observer: AccessObserver

    /// The log's size in pages past which a commit asks for a checkpoint:
    /// SQLite's own default (`wal_autocheckpoint`).
    static let framesPerCheckpoint: Int32 = 1_000

    /// The most frames a background checkpoint leaves to the writer: what a
    /// few commits add while one runs. (A reader may hold some of them;
    /// PASSIVE leaves those, and the writer does not try again.)
    static let catchUpFrames: Int32 = 250

    /// The longest a checkpoint that syncs the database file may take for
    /// the writer to run the next one itself. On this project's machine (an
    /// SSD), one that copies 1,000 frames of a customer service under load
    /// takes 1.5-6 ms, and the writer's own, of 14-140 frames, 0.6-3 ms.
    static let quickCheckpoint: Duration = .milliseconds(10)

    /// `configuration`: the pool's readers' (the key they open with),
    /// opened for writing, since a checkpoint writes the database file.
    init(path: String, configuration: Configuration, observer: AccessObserver) {
        var configuration = configuration
        configuration.readOnly = false
        configuration.createIfMissing = false
        configuration.keepsJournalMode = true
        self.path = path
        self.configuration = configuration
        self.logger = configuration.logger
        self.observer = observer
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
            Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: frames, by: db)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// On the writer's thread, inside its commit, which holds no lock of the
    /// log any more: copies the few frames the last background checkpoint
    /// left, or schedules one unless one is waiting or running.
    private func committed(frames: Int32, by writer: OpaquePointer?) {
        state.lock()
        if frames < loggedFrames {
            // The log started again: the checkpoint before reached its end.
            if let took = lastBackgroundTook { syncsQuickly = took < Self.quickCheckpoint }
            lastBackgroundTook = nil
        }
        loggedFrames = frames
        let catchingUp = leftBehind
        leftBehind = false
        guard frames >= Self.framesPerCheckpoint, !scheduled, !closed else {
            state.unlock()
            return
        }
        if catchingUp, syncsQuickly, frames - copiedFrames <= Self.catchUpFrames, running.try() {
            // No other checkpoint runs (SQLite would refuse this one), and
            // no commit beside this one: the writer is here.
            state.unlock()
            var log: Int32 = 0, copied: Int32 = 0
            let started = ContinuousClock.now
            let code = sqlite3_wal_checkpoint_v2(writer, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
            let took = ContinuousClock.now - started
            running.unlock()
            observer.writerCheckpoints.increment()
            state.lock()
            lastBackgroundTook = nil
            // Copying every frame, with no commit beside it, it synced the database file.
            if took >= Self.quickCheckpoint || (code == SQLITE_OK && copied >= log && copied > copiedFrames) {
                syncsQuickly = took < Self.quickCheckpoint
            }
            // What a reader holds stays for the next background checkpoint.
            if code == SQLITE_OK && copied >= log {
                state.unlock()
                return
            }
            guard !scheduled, !closed else {
                state.unlock()
                return
            }
        }
        scheduled = true
        state.unlock()
        submit()
    }

    private func submit() {
        thread.submit { [self] in
            running.lock()
            defer { running.unlock() }
            checkpoint()
        }
    }

    /// Holding `running`: a `PASSIVE` checkpoint, which waits for nobody.
    /// It runs again at once when it leaves many frames that commits added
    /// meanwhile, and leaves a few to the writer. A failure is logged and
    /// left for a later commit to set off again, as SQLite does with its own.
    private func checkpoint() {
        state.lock()
        let (isClosed, keyIsKnown, configuration, generation) = (closed, self.keyIsKnown, self.configuration, self.generation)
        state.unlock()
        var copied: Int32?
        if !isClosed, keyIsKnown {
            if openedGeneration != generation { connection = nil }
            do {
                let db = try connection ?? Connection(path: path, configuration: configuration)
                connection = db
                openedGeneration = generation
                var log: Int32 = 0, done: Int32 = 0
                let started = ContinuousClock.now
                let code = sqlite3_wal_checkpoint_v2(db.handle, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &done)
                let took = ContinuousClock.now - started
                observer.backgroundCheckpoints.increment()
                if code == SQLITE_OK {
                    copied = done
                    state.withLock { lastBackgroundTook = done == log && done != copiedFrames ? took : nil }
                }
                if code != SQLITE_OK && code != SQLITE_BUSY {
                    connection = nil // the next one opens afresh
                    logger.notice("a background checkpoint failed; a later commit sets it off again", metadata: ["path": "\(path)", "sqlite_code": "\(code)"])
                }
            } catch {
                logger.notice("the checkpoint connection did not open; a later commit tries again", metadata: ["path": "\(path)", "reason": "\((error as? StrongroomError)?.code.rawValue ?? "error")"])
            }
        }
        let again: Bool = state.withLock {
            scheduled = false
            guard let copied, !closed else { return false }
            // Copied nothing new: a reader holds the rest; the next commit asks again.
            let progressed = copied != copiedFrames
            copiedFrames = copied
            let left = loggedFrames - copied
            if left > Self.catchUpFrames {
                scheduled = progressed
            } else if left > 0 {
                leftBehind = true
            }
            return scheduled
        }
        // (Runs after this one: `running` is held until it returns.)
        if again { submit() }
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
