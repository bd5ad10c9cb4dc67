import Foundation
import Strongroom

// reliability-child wal-load DB KEY SECONDS
//   issue 37, item 7: 1 writer and 8 readers on one pool for SECONDS. The
//   writer commits small transactions without a pause; each reader reads
//   for 100 ms at a time, the readers staggered so that one is always
//   active (SQLite's automatic checkpoints then never reset the log). A
//   sampler reads the -wal's size every 100 ms. Prints one JSON line: the
//   peak and last -wal size, the samples, the counts and the seconds it ran
//   (more than SECONDS when it had not yet made the writes and reads of
//   WAL_MIN_WRITES and WAL_MIN_READS: see LoadDeadline).
//
// reliability-child wal-load-async DB KEY SECONDS READERS
//   issue 51, item 6: the default configuration; READERS async readers, each
//   reading again as soon as its read ends (with more readers than the
//   pool's, a read always waits for one: the readers always overlap), and
//   one writer committing batches of 50 inserts of 2,000 bytes as fast as
//   it can. The same JSON line (the -wal sampled every 10 ms).
//   WAL_READ_HOLD_US holds each read that long. WAL_LONG_READ_UNTIL_BYTES:
//   one more read, begun with the load, holds its reader (and its snapshot)
//   until the -wal has been seen past that many bytes, or until the load's
//   cap; its seconds go out as "long_read_seconds" (-1 when there was none).
//   Set WAL_MIN_PEAK_BYTES above it, or the load may stop (at its seconds)
//   before the read does, and then waits for it until the cap.
extension ReliabilityChild {
    static func walLoadAsync(database: String, keyFile: String, seconds: Double, readers readerCount: Int) throws {
        let configuration = Configuration(key: try DatabaseKey.load(keyFile: keyFile))
        let pool = try DatabasePool(path: database, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS event(id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        }
        let readSQL = ProcessInfo.processInfo.environment["WAL_READ_SQL"] ?? "SELECT count(*) FROM event"
        let holdMicroseconds = ProcessInfo.processInfo.environment["WAL_READ_HOLD_US"].flatMap(UInt32.init) ?? 0
        let longReadUntil = ProcessInfo.processInfo.environment["WAL_LONG_READ_UNTIL_BYTES"].flatMap(Int.init)
        let counts = Counts()
        let deadline = LoadDeadline(seconds: seconds, counts: counts)
        // Begun, and its snapshot taken, before the writer starts.
        let longReadBegun = DispatchSemaphore(value: 0)
        let longRead = Task<Double, any Error> {
            guard let longReadUntil else { longReadBegun.signal(); return -1 }
            do {
                return try await pool.asyncRead { db in
                    _ = try db.fetchOne(Int.self, sql: readSQL)
                    longReadBegun.signal()
                    let begun = deadline.elapsed
                    while counts.peakWAL <= longReadUntil && deadline.elapsed < deadline.cap { usleep(10_000) }
                    return deadline.elapsed - begun
                }
            } catch {
                // A read that failed before it began lets the load go on
                // (and its error out at the end), rather than wait for ever.
                longReadBegun.signal()
                throw error
            }
        }
        longReadBegun.wait()
        let writer = started {
            while deadline.isRunning {
                counts.counting {
                    try pool.write { db in
                        for _ in 0..<50 { try db.execute(sql: "INSERT INTO event(body) VALUES (randomblob(2000))") }
                        try db.execute(sql: "DELETE FROM event WHERE id <= (SELECT max(id) FROM event) - 5000")
                    }
                    counts.add(writes: 1)
                }
            }
        }
        let readers = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<readerCount {
                    group.addTask {
                        while deadline.isRunning {
                            do {
                                _ = try await pool.asyncRead { db in
                                    let value = try db.fetchOne(Int.self, sql: readSQL)
                                    if holdMicroseconds > 0 { usleep(holdMicroseconds) }
                                    return value
                                }
                                counts.add(reads: 1)
                            } catch let error as StrongroomError where error.code == .busy {
                                counts.add(busy: 1)
                            } catch {
                                counts.add(otherErrors: 1)
                            }
                        }
                    }
                }
            }
        }
        let samples = sampleWAL(database + "-wal", until: deadline, noting: counts)
        // When the load stopped, before the reads queued behind it drain.
        let secondsRun = deadline.elapsed
        writer.join()
        let done = DispatchSemaphore(value: 0)
        let longReadSeconds = Outcome()
        Task {
            _ = await readers.value
            do { longReadSeconds.seconds = try await longRead.value } catch { longReadSeconds.error = error }
            done.signal()
        }
        done.wait()
        if let error = longReadSeconds.error { throw error }
        var figures = counts.snapshot()
        figures["seconds_run"] = secondsRun
        figures["long_read_seconds"] = longReadSeconds.seconds
        figures["peak_wal_bytes"] = samples.max() ?? 0
        figures["last_wal_bytes"] = samples.last ?? 0
        // The peak from every 10 ms sample; the samples kept, one per 100 ms (each the largest of its ten).
        figures["samples"] = stride(from: 0, to: samples.count, by: 10).map { samples[$0..<min($0 + 10, samples.count)].max() ?? 0 }
        figures["readers"] = readerCount
        FileHandle.standardOutput.write(try JSONSerialization.data(withJSONObject: figures) + Data("\n".utf8))
        try pool.close()
    }

    /// The size of `wal` every 10 ms while the load runs, each noted in `counts`.
    static func sampleWAL(_ wal: String, until deadline: LoadDeadline, every microseconds: UInt32 = 10_000, noting counts: Counts? = nil) -> [Int] {
        var samples: [Int] = []
        while deadline.isRunning {
            var status = stat()
            let size = stat(wal, &status) == 0 ? Int(status.st_size) : 0
            samples.append(size)
            counts?.noteWAL(bytes: size)
            usleep(microseconds)
        }
        return samples
    }

    static func walLoad(database: String, keyFile: String, seconds: Double) throws {
        var configuration = Configuration(key: try DatabaseKey.load(keyFile: keyFile))
        configuration.maximumReaderCount = 8
        let pool = try DatabasePool(path: database, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS event(id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        }
        let counts = Counts()
        let deadline = LoadDeadline(seconds: seconds, counts: counts)
        let writer = started {
            var n = 0
            while deadline.isRunning {
                counts.counting {
                    try pool.write { db in
                        try db.execute(sql: "INSERT INTO event(body) VALUES (randomblob(2000))")
                        try db.execute(sql: "DELETE FROM event WHERE id <= (SELECT max(id) FROM event) - 2000")
                    }
                    counts.add(writes: 1)
                }
                n += 1
                if n % 4 == 0 { usleep(200) }
            }
        }
        let readers = (0..<8).map { index in
            started {
                usleep(UInt32(index) * 12_500)
                while deadline.isRunning {
                    counts.counting {
                        _ = try pool.read { db in
                            let rows = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM event") ?? 0
                            usleep(100_000)
                            return rows
                        }
                        counts.add(reads: 1)
                    }
                }
            }
        }
        let wal = database + "-wal"
        let samples = sampleWAL(wal, until: deadline, every: 100_000, noting: counts)
        let secondsRun = deadline.elapsed
        writer.join()
        for reader in readers { reader.join() }
        var figures = counts.snapshot()
        figures["seconds_run"] = secondsRun
        figures["peak_wal_bytes"] = samples.max() ?? 0
        figures["last_wal_bytes"] = samples.last ?? 0
        figures["samples"] = samples
        FileHandle.standardOutput.write(try JSONSerialization.data(withJSONObject: figures) + Data("\n".utf8))
        try pool.close()
    }
}
