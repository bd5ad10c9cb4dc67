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
public enum FuzzMain {
    public static func run(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt,
                           seeds: () throws -> [(name: String, bytes: [UInt8])] = { [] }) -> Never {
        Seeds.writeIfAsked(seeds)
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, test))
    }
}
