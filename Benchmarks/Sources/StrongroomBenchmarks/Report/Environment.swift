import Foundation
import Strongroom
import StrongroomCrypto

/// What the figures were measured on: the machine, the toolchain and the
/// libraries, read from the system at the start of the run.
struct Environment: Codable, Sendable {
    var date: String
    var host: String
    var cpuModel: String
    var cores: Int
    var memoryGiB: Double
    var diskKind: String
    var kernel: String
    var swift: String
    var sqlcipher: String
    var sqlcipherSQLite: String
    var systemSQLite: String
    var openssl: String
    var workDirectory: String
    /// The commit measured ("-dirty" with uncommitted changes), the build
    /// configuration, and the GRDB version the peer pins (absent in reports
    /// of earlier harnesses).
    var commit: String?
    var build: String?
    var grdb: String?

    /// "Strongroom COMMIT (release build), GRDB VERSION".
    var measured: String {
        "Strongroom \(commit ?? "unknown commit") (\(build ?? "unknown") build), GRDB \(grdb ?? "unknown")"
    }

    /// "CPU, N cores, M GiB, files on DISK, Linux KERNEL".
    var machine: String { "\(cpuModel), \(cores) cores, \(memoryGiB) GiB, files on \(diskKind), Linux \(kernel)" }

    static func read(workDirectory: String) -> Environment {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let totalKiB = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Double($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        let connection = try? Connection.inMemory(configuration: Configuration(key: .generate()))
        let sqliteVersion = (try? connection?.fetchOne(String.self, sql: "SELECT sqlite_version()")) ?? nil
        let date = ISO8601DateFormatter().string(from: Date())
        return Environment(
            date: date,
            host: ProcessInfo.processInfo.hostName,
            cpuModel: model,
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: (totalKiB / 1_048_576 * 10).rounded() / 10,
            diskKind: diskKind(of: workDirectory),
            kernel: firstLine(of: "/proc/sys/kernel/osrelease") ?? "unknown",
            swift: firstLine(ofCommand: "swift", ["--version"]) ?? "unknown",
            sqlcipher: connection?.cipherVersion ?? "unknown",
            sqlcipherSQLite: sqliteVersion ?? "unknown",
            systemSQLite: firstLine(ofCommand: "sqlite3", ["--version"]).map { String($0.split(separator: " ").first ?? "") } ?? "not installed",
            openssl: firstLine(ofCommand: "openssl", ["version"]) ?? "unknown",
            workDirectory: workDirectory,
            commit: firstLine(ofCommand: "git", ["rev-parse", "--short", "HEAD"]).map { commit in
                (firstLine(ofCommand: "git", ["status", "--porcelain", "--untracked-files=no"]) ?? "").isEmpty ? commit : commit + "-dirty"
            },
            build: buildConfiguration,
            grdb: pinnedGRDB())
    }

    #if DEBUG
    static let buildConfiguration = "debug"
    #else
    static let buildConfiguration = "release"
    #endif

    /// The exact GRDB version `GRDBPeer/Package.swift` pins.
    static func pinnedGRDB() -> String? {
        guard let manifest = try? String(contentsOfFile: "GRDBPeer/Package.swift", encoding: .utf8),
              let line = manifest.split(separator: "\n").first(where: { $0.contains("GRDB.swift") && $0.contains("exact:") }),
              let version = line.split(separator: "\"").dropFirst(3).first else { return nil }
        return String(version)
    }

    /// The filesystem type of `path` and whether its block device spins
    /// (`/sys/block/*/queue/rotational`), e.g. "ext4 on SSD", "tmpfs".
    static func diskKind(of path: String) -> String {
        guard let df = firstLine(ofCommand: "df", ["--output=fstype,source", path], skip: 1) else { return "unknown" }
        let fields = df.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 2 else { return df }
        let type = String(fields[0]), source = String(fields[1])
        guard source.hasPrefix("/dev/") else { return type }
        var device = String(source.dropFirst(5))
        // A partition (sda1, nvme0n1p2, vda1) belongs to its whole disk.
        while !FileManager.default.fileExists(atPath: "/sys/block/\(device)"), let last = device.last, last.isNumber || last == "p" {
            device.removeLast()
        }
        let rotational = firstLine(of: "/sys/block/\(device)/queue/rotational")
        let kind = rotational == "0" ? "SSD" : rotational == "1" ? "rotating disk" : "unknown device"
        return "\(type) on \(kind) (\(device))"
    }

    static func firstLine(of file: String) -> String? {
        (try? String(contentsOfFile: file, encoding: .utf8))?.split(separator: "\n").first.map(String.init)
    }

    static func firstLine(ofCommand command: String, _ arguments: [String], skip: Int = 0) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        return lines.count > skip ? lines[skip].trimmingCharacters(in: .whitespaces) : nil
    }
}
