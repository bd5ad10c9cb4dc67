import Foundation
import Strongroom
import StrongroomFields

/// Issue 38, item 5: the customer service under load, measured with wrk on
/// loopback, against the same service on GRDB 7.10.
///
/// Three services, each its own process on a new database in the run's
/// work directory (release builds):
/// - "Strongroom encrypted": `Examples/CustomerService`, an encrypted
///   database (a raw key file), e-mail and note sealed;
/// - "Strongroom plaintext file": the same binary with `--plaintext`, a
///   plaintext database file, e-mail and note still sealed;
/// - "GRDB plaintext": `Benchmarks/GRDBService`, GRDB 7.10 on the system's
///   plaintext SQLite, nothing sealed.
///
/// All three are started, then each is seeded with `rows` customers through
/// its API (`Load/seed.lua`: one connection, `customer1..N@example.com`,
/// ids 1..N; not timed), warmed up with a short mix, then loaded phase by
/// phase: the mix (`Load/mix.lua`, 80% get by id, 10% lookup by e-mail, 10%
/// create), then each endpoint alone (`get.lua`, `lookup.lua`,
/// `create.lua`). In each phase the three run one after the other (one
/// service under load at a time, the other two idle), in an order rotated
/// and reversed from phase to phase (and round to round), as the runner
/// orders contenders: no service always runs first, last, or after the
/// same neighbour. At the end each is sent SIGTERM and must exit 0.
///
/// wrk and the service under load share the machine's cores: the figures
/// are those of client and server on one machine, with the CPU both use
/// recorded (the machine's busy share, and the server's CPU time per
/// request).
enum ServiceLoad {
    static let encrypted = "Strongroom encrypted"
    static let plaintextFile = "Strongroom plaintext file"
    static let grdb = "GRDB plaintext"

    /// What a run is given: the built services, the wrk scripts, and the sizes.
    struct Settings {
        var customerService: String
        var grdbService: String
        var scripts: String
        var wrk = "wrk"
        var rows = 10_000
        var threads = 2
        var connections = 64
        var mixSeconds = 30
        var endpointSeconds = 10
        var warmUpSeconds = 5
        var rounds = 1
        var readers = 4
    }

    /// One load phase: a wrk script, its length, and the workload's name.
    struct Phase {
        let script: String
        let name: String
        let seconds: Int
        let what: String
    }

    static func phases(_ settings: Settings) -> [Phase] {
        [
            Phase(script: "mix", name: "service mix: 80% get by id, 10% lookup by e-mail, 10% create", seconds: settings.mixSeconds,
                  what: "`mix.lua`: 80% `GET /customers/{id}` (a random id in 1..N), 10% `GET /customers?email=customerK@example.com` (a random K in 1..N), 10% `POST /customers` (a new e-mail, a note of 95 characters, a country)"),
            Phase(script: "get", name: "service: GET /customers/{id}", seconds: settings.endpointSeconds,
                  what: "`get.lua`: `GET /customers/{id}`, a random id in 1..N"),
            Phase(script: "lookup", name: "service: GET /customers?email=", seconds: settings.endpointSeconds,
                  what: "`lookup.lua`: `GET /customers?email=customerK@example.com`, a random K in 1..N (Strongroom: through the blind index; GRDB: the UNIQUE column's index)"),
            Phase(script: "create", name: "service: POST /customers", seconds: settings.endpointSeconds,
                  what: "`create.lua`: `POST /customers`, each with a new e-mail (Strongroom: e-mail and note sealed, the blind index computed)"),
        ]
    }

    /// The JSON line the scripts' `done()` prints.
    struct WrkResult: Decodable, Sendable {
        struct Latency: Decodable, Sendable { var p50: Double; var p90: Double; var p99: Double; var p999: Double; var max: Double; var mean: Double }
        struct SocketErrors: Decodable, Sendable { var connect: Int; var read: Int; var write: Int; var timeout: Int }
        var script: String
        var seconds: Double
        var requests: Int
        var requests_per_s: Double
        var latency_us: Latency
        var non2xx: Int
        var status: [String: Int]
        var socket_errors: SocketErrors

        var failures: Int { non2xx + socket_errors.connect + socket_errors.read + socket_errors.write + socket_errors.timeout }
    }

    /// One wrk run against one service, with the CPU it took.
    struct Measured: Sendable {
        var wrk: WrkResult
        /// The machine's busy share of its cores over the run (0...1).
        var machineBusy: Double
        /// The service's CPU time (user + system) per completed request, µs.
        var serverCPUPerRequest: Double
        /// The service's CPU time over the run, in cores (1.0 = one core busy).
        var serverCores: Double
    }

    /// A service process, started and listening.
    final class Service {
        let name: String
        let process: Process
        let log: String
        let database: String
        var port = 0

        init(name: String, executable: String, arguments: [String], log: String, database: String) throws {
            self.name = name
            self.log = log
            self.database = database
            process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardError = handle
            process.standardOutput = handle
            process.standardInput = FileHandle.nullDevice
            try process.run()
            try handle.close()
        }

        /// Waits for the `listening ... port=N` line the services log.
        func waitUntilListening(timeout: Double = 120) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if let line = text.split(separator: "\n").first(where: { $0.contains("listening") && $0.contains("port=") }),
                   let range = line.range(of: "port="),
                   let port = Int(line[range.upperBound...].prefix(while: \.isNumber)), port > 0 {
                    self.port = port
                    return
                }
                guard process.isRunning else {
                    throw BenchmarkError("\(name) exited (status \(process.terminationStatus)) before listening:\n\(tail())")
                }
                usleep(50_000)
            }
            throw BenchmarkError("\(name) did not log `listening ... port=` within \(Int(timeout)) s:\n\(tail())")
        }

        /// The libraries the running process mapped whose names contain
        /// sqlite or sqlcipher (from /proc/PID/maps): what it really runs on.
        func sqliteLibraries() -> [String] {
            let maps = ServiceLoad.readProc("/proc/\(process.processIdentifier)/maps")
            var found = Set<String>()
            for line in maps.split(separator: "\n") {
                guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init), path.hasPrefix("/") else { continue }
                let file = (path as NSString).lastPathComponent
                if file.contains("libsqlcipher") || file.contains("libsqlite3") {
                    found.insert(URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
                }
            }
            return found.sorted()
        }

        /// CPU seconds (user + system) the process has used.
        func cpuSeconds() -> Double { ServiceLoad.cpuSeconds(of: process.processIdentifier) }

        /// SIGTERM, then the exit status (nil when it had to be killed).
        func terminate(timeout: Double = 120) -> Int32? {
            guard process.isRunning else { return process.terminationStatus }
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        }

        func tail(_ lines: Int = 20) -> String {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
        }
    }

    /// Runs wrk with one of the scripts and returns its JSON line.
    static func wrk(_ settings: Settings, script: String, port: Int, threads: Int, connections: Int, seconds: Int,
                    arguments: [String], latency: Bool = true) throws -> WrkResult {
        let line = try wrkLine(settings, script: script, port: port, threads: threads, connections: connections, seconds: seconds,
                               arguments: arguments, latency: latency)
        guard let result = try? JSONDecoder().decode(WrkResult.self, from: Data(line.utf8)) else {
            throw BenchmarkError("wrk \(script).lua printed a line this harness cannot read:\n\(line)")
        }
        return result
    }

    /// Runs wrk with one of the scripts and returns the JSON line its script printed.
    static func wrkLine(_ settings: Settings, script: String, port: Int, threads: Int, connections: Int, seconds: Int,
                        arguments: [String], latency: Bool = true) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [settings.wrk, "-t", String(threads), "-c", String(connections), "-d", "\(seconds)s"]
            + (latency ? ["--latency"] : []) + ["-s", "\(settings.scripts)/\(script).lua", "http://127.0.0.1:\(port)", "--"] + arguments
        // Its output and errors in one pipe (it prints a little): read to the end, then reap it.
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0,
              let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{\"script\":") }) else {
            throw BenchmarkError("wrk \(script).lua failed (status \(process.terminationStatus)):\n\(text)")
        }
        return String(line)
    }

    /// A wrk phase against `service`, with the CPU the machine and the service used.
    static func measure(_ settings: Settings, _ service: Service, phase: Phase, nonce: String) throws -> Measured {
        let machineBefore = machineTicks(), serverBefore = service.cpuSeconds()
        let result = try wrk(settings, script: phase.script, port: service.port, threads: settings.threads, connections: settings.connections,
                             seconds: phase.seconds, arguments: [String(settings.rows), nonce])
        let machineAfter = machineTicks(), serverAfter = service.cpuSeconds()
        let busy = Double(machineAfter.busy - machineBefore.busy) / Double(max(1, machineAfter.total - machineBefore.total))
        let serverCPU = serverAfter - serverBefore
        return Measured(wrk: result, machineBusy: busy,
                        serverCPUPerRequest: result.requests > 0 ? serverCPU / Double(result.requests) * 1e6 : .nan,
                        serverCores: serverCPU / max(result.seconds, 1e-9))
    }

    /// `rows` customers through the API, one request at a time (not timed):
    /// exactly `rows` answers of 201.
    static func seed(_ settings: Settings, _ service: Service) throws {
        // seed.lua exits after the N-th answer with its own line (0 when every answer was a 2xx).
        struct Seeded: Decodable { var requests: Int; var non2xx: Int; var status: [String: Int] }
        let line: String
        do {
            line = try wrkLine(settings, script: "seed", port: service.port, threads: 1, connections: 1, seconds: 600,
                               arguments: [String(settings.rows)], latency: false)
        } catch {
            throw BenchmarkError("seeding \(service.name) failed: \(error)\n\(service.tail())")
        }
        guard let result = try? JSONDecoder().decode(Seeded.self, from: Data(line.utf8)),
              result.requests == settings.rows, result.status["201"] == settings.rows, result.non2xx == 0 else {
            throw BenchmarkError("seeding \(service.name) gave \(line) (expected \(settings.rows) answers of 201):\n\(service.tail())")
        }
    }

    /// The order of `count` contenders in step `step`: rotated every two
    /// steps and reversed every other one, as the runner orders its rounds.
    static func order(_ count: Int, step: Int) -> [Int] {
        (0..<count).map { i in
            let rotated = (i + step / 2) % count
            return step % 2 == 0 ? rotated : count - 1 - rotated
        }
    }

    /// A file of /proc, read to its end (its size is 0 to stat: read as a stream).
    static func readProc(_ path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }

    /// CPU seconds of a process, from /proc/PID/stat (utime + stime).
    static func cpuSeconds(of pid: pid_t) -> Double {
        let stat = readProc("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return .nan }
        // Fields after the command's closing parenthesis: state is field 3; utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The machine's CPU ticks, all and busy (not idle nor iowait), from /proc/stat.
    static func machineTicks() -> (total: Int, busy: Int) {
        let stat = readProc("/proc/stat")
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return (0, 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard values.count >= 5 else { return (0, 0) }
        let total = values.prefix(8).reduce(0, +)
        return (total, total - values[3] - values[4])
    }

    /// The process's load average over 1 minute, from /proc/loadavg.
    static func loadAverage() -> Double {
        Double(readProc("/proc/loadavg").split(separator: " ").first ?? "") ?? .nan
    }
}

extension WorkloadContext {
    /// The `service` group: see ``ServiceLoad``. Each phase is one workload
    /// (requests per second, higher is better), with every service's p50,
    /// p99 and p99.9 (the medians of the rounds'), its failed requests, and
    /// the CPU the machine and the server used.
    func serviceLoad(_ runner: inout Runner, settings: ServiceLoad.Settings) throws {
        let names = [ServiceLoad.encrypted, ServiceLoad.plaintextFile, ServiceLoad.grdb]
        let roles: [Role] = [.ours, .ours, .peer]
        let phases = ServiceLoad.phases(settings)
        var runs: [String: [String: [ServiceLoad.Measured]]] = [:] // phase -> service -> rounds
        var exits: [String: [Int32?]] = [:]
        var libraries: [String: [String]] = [:]
        var loads: [Double] = []
        runner.progress("service: \(names.joined(separator: ", ")); \(formattedSize(settings.rows)) customers, wrk -t \(settings.threads) -c \(settings.connections), mix \(settings.mixSeconds) s, endpoints \(settings.endpointSeconds) s, \(settings.rounds) round(s); load average \(String(format: "%.2f", ServiceLoad.loadAverage()))")
        for round in 0..<settings.rounds {
            let folder = "\(directory)/service-\(round)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let keyFile = "\(folder)/db.key", keyring = "\(folder)/fields.keyring"
            try KeyFile.write(DatabaseKey.generate(), to: keyFile)
            try FieldKeyring.generate().write(to: keyring)
            let readers = String(settings.readers)
            var services: [ServiceLoad.Service] = []
            // Whatever happens, no service outlives the run.
            defer { for s in services where s.process.isRunning { kill(s.process.processIdentifier, SIGKILL); s.process.waitUntilExit() } }
            services.append(try ServiceLoad.Service(name: ServiceLoad.encrypted, executable: settings.customerService, arguments: [
                "--host", "127.0.0.1", "--port", "0", "--database", "\(folder)/encrypted.db", "--key-file", keyFile,
                "--field-keys", keyring, "--readers", readers, "--log-level", "notice"], log: "\(folder)/encrypted.log", database: "\(folder)/encrypted.db"))
            services.append(try ServiceLoad.Service(name: ServiceLoad.plaintextFile, executable: settings.customerService, arguments: [
                "--host", "127.0.0.1", "--port", "0", "--database", "\(folder)/plaintext.db", "--plaintext",
                "--field-keys", keyring, "--readers", readers, "--log-level", "notice"], log: "\(folder)/plaintext.log", database: "\(folder)/plaintext.db"))
            services.append(try ServiceLoad.Service(name: ServiceLoad.grdb, executable: settings.grdbService, arguments: [
                "--host", "127.0.0.1", "--port", "0", "--database", "\(folder)/grdb.db", "--readers", readers, "--log-level", "notice"],
                log: "\(folder)/grdb.log", database: "\(folder)/grdb.db"))
            for service in services {
                try service.waitUntilListening()
                libraries[service.name] = service.sqliteLibraries()
            }
            try Self.checkEngines(libraries)
            for service in services {
                let started = Date()
                try ServiceLoad.seed(settings, service)
                runner.progress("service: \(service.name) seeded with \(formattedSize(settings.rows)) customers in \(String(format: "%.1f", Date().timeIntervalSince(started))) s (port \(service.port))")
            }
            if settings.warmUpSeconds > 0 {
                let warmUp = ServiceLoad.Phase(script: "mix", name: "warm-up", seconds: settings.warmUpSeconds, what: "")
                for index in ServiceLoad.order(services.count, step: round) {
                    _ = try ServiceLoad.measure(settings, services[index], phase: warmUp, nonce: "p\(getpid())r\(round)warm")
                }
            }
            for (p, phase) in phases.enumerated() {
                for index in ServiceLoad.order(services.count, step: round * phases.count + p + 1) {
                    let service = services[index]
                    loads.append(ServiceLoad.loadAverage())
                    let measured = try ServiceLoad.measure(settings, service, phase: phase, nonce: "p\(getpid())r\(round)\(phase.script)")
                    runs[phase.script, default: [:]][service.name, default: []].append(measured)
                    let l = measured.wrk.latency_us
                    runner.progress(String(format: "service %@: %@ %.0f req/s, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, %d failed; machine %.0f%% busy, server %.2f cores, %.1f µs CPU/request",
                                           phase.script, service.name, measured.wrk.requests_per_s, l.p50 / 1000, l.p99 / 1000, l.p999 / 1000,
                                           measured.wrk.failures, measured.machineBusy * 100, measured.serverCores, measured.serverCPUPerRequest))
                    if measured.wrk.failures > 0 {
                        runner.progress("service \(phase.script): \(service.name) answered \(measured.wrk.non2xx) non-2xx (\(measured.wrk.status)); its log ends:\n\(service.tail(5))")
                    }
                }
            }
            for service in services {
                let status = service.terminate()
                exits[service.name, default: []].append(status)
                if status != 0 {
                    runner.progress("service: \(service.name) did not exit 0 on SIGTERM (\(status.map { String($0) } ?? "killed after 120 s")):\n\(service.tail())")
                }
            }
        }

        let enginesNote = names.map { "\($0): \(libraries[$0]?.joined(separator: ", ") ?? "?")" }.joined(separator: "; ")
        for (p, phase) in phases.enumerated() {
            var contenders: [ContenderResult] = []
            var latencies: [String: Latencies] = [:]
            var figures: [String: Double] = [:]
            var failures = 0
            for (name, role) in zip(names, roles) {
                let measured = runs[phase.script]?[name] ?? []
                var samples = Samples()
                measured.forEach { samples.add($0.wrk.requests_per_s) }
                contenders.append(ContenderResult(name: name, role: role, samples: samples))
                latencies[name] = Latencies(medianOf: measured.map { Latencies(p50: $0.wrk.latency_us.p50, p99: $0.wrk.latency_us.p99, p999: $0.wrk.latency_us.p999) })
                let failed = measured.reduce(0) { $0 + $1.wrk.failures }
                failures += failed
                figures["failed requests (non-2xx or socket errors), \(name)"] = Double(failed)
                func median(_ figure: (ServiceLoad.Measured) -> Double) -> Double {
                    var s = Samples(); measured.forEach { s.add(figure($0)) }; return s.median
                }
                figures["server CPU µs per request, \(name)"] = (median(\.serverCPUPerRequest) * 10).rounded() / 10
                figures["server cores busy, \(name)"] = (median(\.serverCores) * 100).rounded() / 100
                figures["machine busy % (2 cores: wrk + server), \(name)"] = (median(\.machineBusy) * 1000).rounded() / 10
            }
            figures["failed requests (non-2xx or socket errors)"] = Double(failures)
            var targets: [Target] = [.value("failed requests (non-2xx or socket errors)", atMost: 0)]
            var notes = [
                "\(phase.what). wrk 4 (`Examples/CustomerService/Load/\(phase.script).lua`), `-t \(settings.threads) -c \(settings.connections) -d \(phase.seconds)s --latency`, on loopback; N = \(formattedSize(settings.rows)) customers seeded through the API before the first phase (not timed). Requests per second: wrk's completed requests over its run; latencies (wrk's, from the request's write to its answer; no correction for coordinated omission): the medians of the rounds' p50, p99 and p99.9.",
            ]
            if p == 0 {
                let statuses = names.map { name in "\(name) \(exits[name]?.map { $0.map { String($0) } ?? "killed" }.joined(separator: ", ") ?? "?")" }
                let badExits = names.reduce(0) { $0 + (exits[$1]?.filter { $0 != 0 }.count ?? 0) }
                figures["exits other than 0 after SIGTERM"] = Double(badExits)
                targets = [
                    .ratio(ServiceLoad.encrypted, to: ServiceLoad.grdb, atLeast: 1),
                    .p99(ServiceLoad.encrypted, to: ServiceLoad.grdb, atMost: 1.1),
                    .value("exits other than 0 after SIGTERM", atMost: 0),
                ] + targets
                notes += [
                    "Services, each its own process on a new database, release builds, \(settings.readers) readers each: \(ServiceLoad.encrypted) (`Examples/CustomerService`: an encrypted database, a raw key file; e-mail and note sealed, the e-mail's blind index UNIQUE), \(ServiceLoad.plaintextFile) (the same binary with `--plaintext`: no database key, e-mail and note still sealed), \(ServiceLoad.grdb) (`Benchmarks/GRDBService`: the same routes and JSON on GRDB 7.10's `DatabasePool`, async `read`/`write`, Codable records, the system's plaintext SQLite, nothing sealed, GRDB's defaults: WAL, synchronous NORMAL, SQLite's default page cache). Each answers through Hummingbird 2.28 with the same request and JSON code.",
                    "Order: the three are started and seeded, each warmed up with \(settings.warmUpSeconds) s of the mix (not recorded), then each phase (the mix, then GET by id, lookup by e-mail, create) runs on one service at a time, the order rotated and reversed from phase to phase and round to round. At the end each gets SIGTERM and must exit 0 (\(statuses.joined(separator: "; "))).",
                    "wrk and the service under load share the machine's \(ProcessInfo.processInfo.activeProcessorCount) cores; \"server CPU µs per request\" is the service's user + system time over its requests (its cost apart from wrk's), \"server cores busy\" that time over the run, \"machine busy\" the share of all cores busy (wrk, the server and anything else). The 1-minute load average before each phase's runs: \(String(format: "%.2f to %.2f", loads.min() ?? .nan, loads.max() ?? .nan)).",
                    "SQLite libraries each service mapped (/proc/PID/maps): \(enginesNote).",
                    "For scale (issue 38): a first service written from the docs, on this kind of 2-core machine, served 42,000 GET-by-id requests/s at 32 connections (release build).",
                ]
            }
            var result = WorkloadResult(name: phase.name, group: "service", size: settings.rows, unit: "req/s", lowerIsBetter: false,
                                        contenders: contenders, targets: targets, figures: figures, notes: notes)
            result.latencies = latencies
            runner.record(result)
        }
    }

    /// The Strongroom service must run on the engine this harness was built
    /// for (its report names that engine), and the GRDB service on the
    /// system's SQLite alone, never beside SQLCipher.
    static func checkEngines(_ libraries: [String: [String]]) throws {
        let ours = SQLCipherLibrary.nativeFormat == .sqlcipher4 ? "libsqlcipher.so.1" : "libsqlcipher.so.0"
        for name in [ServiceLoad.encrypted, ServiceLoad.plaintextFile] {
            let mapped = libraries[name] ?? []
            guard mapped.contains(where: { ($0 as NSString).lastPathComponent.hasPrefix(ours) }),
                  !mapped.contains(where: { ($0 as NSString).lastPathComponent.hasPrefix("libsqlite3") }) else {
                throw BenchmarkError("\(name) runs on \(mapped.joined(separator: ", ")), not on this harness's engine (\(ours), SQLCipher \(SQLCipherLibrary.nativeFormat == .sqlcipher4 ? "4" : "3")): build the service for the same engine (make bench-service ENGINE=…).")
            }
        }
        let grdb = libraries[ServiceLoad.grdb] ?? []
        guard grdb.contains(where: { ($0 as NSString).lastPathComponent.hasPrefix("libsqlite3") }),
              !grdb.contains(where: { $0.contains("libsqlcipher") }) else {
            throw BenchmarkError("\(ServiceLoad.grdb) runs on \(grdb.joined(separator: ", ")): it must run on the system's libsqlite3 alone.")
        }
    }
}
