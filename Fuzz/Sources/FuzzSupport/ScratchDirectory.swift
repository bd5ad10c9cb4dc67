import Foundation
import Synchronization

/// A private directory for the files a target writes for each input (key
/// files, keyrings): in memory when it can be (/dev/shm), since what the
/// library writes back is synced. Removed when the process exits.
public enum ScratchDirectory {
    /// Makes `strongroom-fuzz-<name>-<pid>` (mode 0700) and returns its path.
    public static func make(_ name: String) -> String {
        let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm/" : NSTemporaryDirectory()
        let path = base + "strongroom-fuzz-\(name)-\(getpid())"
        mkdir(path, 0o700)
        made.withLock { $0.append(path) }
        atexit {
            for path in ScratchDirectory.made.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
        return path
    }

    private static let made = Mutex<[String]>([])
}
