#ifndef STRONGROOM_FUZZ_LIBFUZZER_H
#define STRONGROOM_FUZZ_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (LLVM's FuzzerInterface.h): parses libFuzzer's
/// command line and fuzzes `callback`, as libFuzzer's own `main` does. It
/// comes from libclang_rt.fuzzer_no_main, which Scripts/fuzz.sh links.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
