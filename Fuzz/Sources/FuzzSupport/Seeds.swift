import Foundation

/// The seed corpus a target makes with the library itself (envelopes it
/// sealed, keyrings it wrote): with `STRONGROOM_FUZZ_SEEDS=DIR` set, a
/// target's `LLVMFuzzerInitialize` writes its seeds into DIR and exits
/// instead of fuzzing. `Scripts/fuzz.sh --seeds` runs every target that way.
public enum Seeds {
    /// The directory seeds are asked for in, if any.
    public static var directory: String? {
        guard let value = getenv("STRONGROOM_FUZZ_SEEDS"), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// When seeds are asked for: writes each (name, bytes) of `make()` into
    /// the directory, then exits.
    public static func writeIfAsked(_ make: () throws -> [(name: String, bytes: [UInt8])]) {
        guard let directory else { return }
        let seeds: [(name: String, bytes: [UInt8])]
        do {
            seeds = try make()
        } catch {
            fail("making the seeds failed: \(error)")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            fail("cannot create \(directory): \(error)")
        }
        for seed in seeds {
            // File names of letters, digits, - and _ only.
            let name = String(seed.name.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") ? Character($0) : "-" })
            write(seed.bytes, to: directory + "/" + name)
        }
        print("wrote \(seeds.count) seeds to \(directory)")
        exit(0)
    }

    /// Writes `bytes` to a new file at `path` with `mode`, replacing it.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { fail("cannot create \(path)") }
        defer { close(fd) }
        fchmod(fd, mode)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { fail("cannot write \(path)") }
    }
}
