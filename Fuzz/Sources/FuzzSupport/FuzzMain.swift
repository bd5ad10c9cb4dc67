internal import CLibFuzzer
#if canImport(Glibc)
import Glibc
#endif

/// A fuzz target's `main`: writes the target's seeds when they are asked
/// for (see ``Seeds``), else hands the command line to libFuzzer's driver,
/// which runs `test` (the target's `LLVMFuzzerTestOneInput`) on its inputs.
///
/// The targets have a `main` of their own, rather than libFuzzer's, because
/// SwiftPM links a macro plugin into the same build: with `--sanitize=fuzzer`
/// the plugin, too, would get libFuzzer's `main` and fail to link. So the
/// package is built with coverage and AddressSanitizer only
/// (`-sanitize=address -sanitize-coverage=…`, what `-sanitize=fuzzer`
/// instruments) and links `libclang_rt.fuzzer_no_main` (Scripts/fuzz.sh).
///
/// With `STRONGROOM_FUZZ_LEAK_CANARY=1` the target leaks a reference cycle
/// on every input, besides running `test`: `Scripts/fuzz.sh` runs each target
/// so first, and refuses to fuzz unless libFuzzer reports the leak (a run
/// whose options turn leak detection off would otherwise pass silently).
public enum FuzzMain {
    public static func run(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt,
                           seeds: () throws -> [(name: String, bytes: [UInt8])] = { [] }) -> Never {
        Seeds.writeIfAsked(seeds)
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        if let canary = getenv("STRONGROOM_FUZZ_LEAK_CANARY"), String(cString: canary) == "1" {
            canaryTest = test
            exit(LLVMFuzzerRunDriver(&argc, &argv, leakingTest))
        }
        exit(LLVMFuzzerRunDriver(&argc, &argv, test))
    }
}

/// The target's test, for ``leakingTest`` (set once, before libFuzzer runs).
nonisolated(unsafe) private var canaryTest: (@convention(c) (UnsafePointer<UInt8>?, Int) -> CInt)?

/// An object that points at itself: never freed.
private final class LeakCanary {
    var next: LeakCanary?
}

/// The last canary made. Stored in a global, which the optimizer must keep
/// (a cycle no one reads it may remove, allocation and all); each new one
/// overwrites the last, which is then unreachable: leaked.
nonisolated(unsafe) private var lastCanary: UnsafeMutableRawPointer?

private let leakingTest: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
    let canary = LeakCanary()
    canary.next = canary
    lastCanary = Unmanaged.passUnretained(canary).toOpaque()
    return canaryTest!(data, size)
}
