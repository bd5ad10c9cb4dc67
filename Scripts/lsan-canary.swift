// The leak canary of `make sanitize` (Scripts/sanitize.sh address): built with
// AddressSanitizer and run under the suite's own LeakSanitizer options and
// Scripts/lsan.supp before the suite. It starts a child process (what the
// Process.run() suppression is for) and then leaks ten reference cycles, each
// of which once had a weak reference. The run must report the cycles and use
// the Process.run() suppression: a suppression that hid them (as one for the
// runtime's weak-reference side tables did: a suppressed block counts as live,
// and a side table points at its object) would hide real leaks in the suite.
import Foundation

final class Node {
    var next: Node?
}

@inline(never) func leakCycleOnceWeaklyReferenced() {
    let a = Node(), b = Node()
    a.next = b
    b.next = a
    weak var observer = a
    _ = observer
    observer = nil
}

let process = Process()
process.executableURL = URL(fileURLWithPath: "/bin/true")
try process.run()
process.waitUntilExit()
for _ in 0..<10 { leakCycleOnceWeaklyReferenced() }
