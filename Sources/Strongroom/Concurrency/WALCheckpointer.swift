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
/// that ends with many frames left over runs again at once (while it
/// copies more), and one that ends with a few (``catchUpFrames``) leaves
/// them to the writer, which copies them at its next commit, with no
/// commit beside it; the transaction after that starts the log again.
///
/// The writer's commit then waits for that checkpoint, `fsync`s included.
/// It runs at most one a cycle of the log, and only while the database
/// file is known to sync quickly: the checkpoint thread times an `fsync` of
/// it through SQLite's file (``probeInterval``), and the writer's own
/// checkpoints, which copy every frame with no commit beside them, sync it
/// too; each must keep its thread blocked under ``quickCheckpoint``. Once
/// the disk is slow to sync, the next such commit waits for one slow
/// `fsync` (however long the disk takes), and later ones wait for none,
/// the log starting again when a background checkpoint falls between two
/// commits, as before, until a timed `fsync` is quick again. Frames left to
/// the writer when the writes stop stay in the log (durable there) until
/// the next commit or the pool's close.
///
/// Truncating the log (``CheckpointPolicy``) stays with the writer, which
/// waits for a checkpoint in progress first: SQLite lets one checkpoint run
/// at a time, and refuses a second without waiting.
final class WALCheckpointer: @unchecked Sendable {
    // Sendable: `scheduled`, `closed`, `keyIsKnown`, `configuration`,
    // `generation`, `loggedFrames`, `copiedFrames`, `leftBehind`,
    // `committedMeanwhile`, `caughtUpThisCycle`, `syncsQuickly` and
    // `lastProbe` are guarded by `state`;
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
    /// True when a commit came while a background checkpoint was waiting
    /// or running (a failed one then runs again).
    private var committedMeanwhile = false
    /// True once the writer ran a checkpoint in this cycle of the log: it
    /// runs one at most, however many background ones leave frames (a
    /// reader can stop both short, cycle after cycle).
    private var caughtUpThisCycle = false
    /// True while the last timed `fsync` of the database file (a probe, or
    /// the writer's own checkpoint) kept its thread blocked under
    /// ``quickCheckpoint``.
    private var syncsQuickly = false
    /// When the checkpoint thread last timed an `fsync` of the database
    /// file to learn whether it syncs quickly (see ``probeInterval``).
    private var lastProbe: ContinuousClock.Instant?
    private var closed = false
    /// What the next connection opens with, and how many times it changed.
    private var configuration: Configuration
    private var generation = 0
    /// False from a rekey until the pool knows the key again: no connection opens.
    private var keyIsKnown = true
    private let running = NSLock()
    private var connection: Connection?
    private var openedGeneration = 0
    /// At the main thread's priority, not the readers' (tried at 10 levels
    /// down: the async pool's p99 met its target in 10 runs of 10, but the
    /// example service, whose NIO threads run at the process's level, fell
    /// from 2.30x to 1.72x of GRDB's throughput in its mix on SQLCipher
    /// 4.6.1, one round each: a log checkpointed late costs every read).
    private let thread = ConnectionThread(name: "strongroom-ckpt", niceness: 0)
    private let path: String
    private let logger: Logger
    private let observer: AccessObserver

    /// The log's size in pages past which a commit asks for a checkpoint:
    /// SQLite's own default (`wal_autocheckpoint`).
    static let framesPerCheckpoint: Int32 = 1_000

    /// The most frames a background checkpoint leaves to the writer: what a
    /// few commits add while one runs. (A reader may hold some of them;
    /// PASSIVE leaves those, and the writer does not try again before the
    /// log starts again.)
    static let catchUpFrames: Int32 = 250

    /// The longest a checkpoint that syncs the database file may keep its
    /// thread blocked (``BlockedTime``: on the disk, not waiting for a core
    /// on a busy machine) for the writer to run the next one itself. On
    /// this project's machine (an SSD), one that copies 1,000 frames of a
    /// customer service under load takes 1.5-6 ms in all, and the writer's
    /// own, of 14-140 frames, 0.6-3 ms.
    static let quickCheckpoint: Duration = .milliseconds(10)

    /// How often, at most, the checkpoint thread times an `fsync` of the
    /// database file while the writer leaves every checkpoint to it (from a
    /// pool's first checkpoint that commits overlap, and after one that was
    /// slow): through SQLite's file, right after a checkpoint that left what
    /// it wrote unsynced, so that it writes as much as a checkpoint's would.
    /// It holds the checkpoint thread's lock meanwhile: a `close()` or
    /// rekey waits for it as for a checkpoint.
    static let probeInterval: Duration = .seconds(10)

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
        // The log started again.
        if frames < loggedFrames { caughtUpThisCycle = false }
        loggedFrames = frames
        let catchingUp = leftBehind
        leftBehind = false
        if scheduled { committedMeanwhile = true }
        // (Nor while a rekey holds `running`, the key unknown: a commit
        // inside it reaches here, and a job run on this thread, should its
        // thread not start, would wait for `running` forever.)
        guard frames >= Self.framesPerCheckpoint, !scheduled, !closed, keyIsKnown else {
            state.unlock()
            return
        }
        if catchingUp, syncsQuickly, !caughtUpThisCycle, frames - copiedFrames <= Self.catchUpFrames, running.try() {
            // No other checkpoint runs (SQLite would refuse this one), and
            // no commit beside this one: the writer is here.
            caughtUpThisCycle = true
            state.unlock()
            var log: Int32 = 0, copied: Int32 = 0
            let (code, took) = BlockedTime.measure {
                sqlite3_wal_checkpoint_v2(writer, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
            }
            running.unlock()
            if code == SQLITE_OK { observer.writerCheckpoints.increment() }
            state.lock()
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
        committedMeanwhile = false
        state.unlock()
        // Runs the checkpoint, and again as long as it asks to (never by
        // submitting from the job: a thread that cannot start runs a job on
        // the caller's thread, which holds `running`).
        thread.submit { [self] in
            running.lock()
            defer { running.unlock() }
            while checkpoint() {}
        }
    }

    /// Holding `running`: a `PASSIVE` checkpoint, which waits for nobody;
    /// true when it is to run again at once: it copied frames and left many
    /// that commits added meanwhile, or it failed with commits meanwhile
    /// (as one scheduled by them would have run). A few frames left go to
    /// the writer. A failure is logged and left for a later commit to set
    /// off again, as SQLite does with its own.
    private func checkpoint() -> Bool {
        state.lock()
        let (isClosed, keyIsKnown, configuration, generation) = (closed, self.keyIsKnown, self.configuration, self.generation)
        committedMeanwhile = false
        state.unlock()
        var copied: Int32?
        if !isClosed, keyIsKnown {
            if openedGeneration != generation { connection = nil }
            do {
                let db = try connection ?? Connection(path: path, configuration: configuration)
                connection = db
                openedGeneration = generation
                var done: Int32 = 0
                let code = sqlite3_wal_checkpoint_v2(db.handle, "main", SQLITE_CHECKPOINT_PASSIVE, nil, &done)
                if code == SQLITE_OK {
                    observer.backgroundCheckpoints.increment()
                    copied = done
                    // It copied frames and stopped short of the log's end
                    // (commits came meanwhile, or a reader held the rest):
                    // what it wrote to the file is unsynced, so an fsync now
                    // has as much to write as a checkpoint's. (A commit that
                    // lands just after a checkpoint that did sync makes this
                    // time a clean file: at worst the writer's next copy is
                    // one slow commit, once a probeInterval.)
                    if state.withLock({ loggedFrames > done && done != copiedFrames }) { probeIfDue(db) }
                }
                if code != SQLITE_OK && code != SQLITE_BUSY {
                    connection = nil // the next one opens afresh
                    logger.notice("a background checkpoint failed; a later commit sets it off again", metadata: ["path": "\(path)", "sqlite_code": "\(code)"])
                }
            } catch {
                logger.notice("the checkpoint connection did not open; a later commit tries again", metadata: ["path": "\(path)", "reason": "\((error as? StrongroomError)?.code.rawValue ?? "error")"])
            }
        }
        return state.withLock {
            defer { committedMeanwhile = false }
            guard !closed else {
                scheduled = false
                return false
            }
            guard let copied else {
                scheduled = committedMeanwhile
                return scheduled
            }
            // Copied nothing new: a reader holds the rest; the next commit asks again.
            let progressed = copied != copiedFrames
            copiedFrames = copied
            let left = loggedFrames - copied
            scheduled = left > Self.catchUpFrames && progressed
            if !scheduled && left > 0 && progressed { leftBehind = true }
            return scheduled
        }
    }

    /// Holding `running`, on the checkpoint thread, after a checkpoint that
    /// left what it wrote unsynced: while the writer leaves every
    /// checkpoint to this thread, times an `fsync` of the database file (at
    /// most once a ``probeInterval``); the writer runs checkpoints
    /// again once one is blocked under ``quickCheckpoint``. A checkpoint
    /// syncs the file only when it reaches the log's end, which SQLite does
    /// not report, and under a steady stream of commits a background one
    /// seldom does: this is how the pool learns the disk syncs quickly.
    private func probeIfDue(_ db: Connection) {
        let now = ContinuousClock.now
        let due = state.withLock {
            guard !syncsQuickly, lastProbe.map({ now - $0 >= Self.probeInterval }) ?? true else { return false }
            lastProbe = now
            return true
        }
        guard due else { return }
        let (code, blocked) = BlockedTime.measure { strongroom_sync_database_file(db.handle) }
        guard code == SQLITE_OK else { return }
        state.withLock { syncsQuickly = blocked < Self.quickCheckpoint }
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
