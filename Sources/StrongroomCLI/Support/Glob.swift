import Foundation

/// Expands a `--database` value: a glob pattern (`tenants/*.db`) to the files
/// it matches, sorted; a plain path to itself.
enum Glob {
    static func expand(_ pattern: String) -> [String] {
        guard pattern.contains(where: { "*?[".contains($0) }) else { return [pattern] }
        var result = glob_t()
        defer { globfree(&result) }
        guard glob(pattern, 0, nil, &result) == 0 else { return [] }
        return (0..<Int(result.gl_pathc)).compactMap { result.gl_pathv[$0].map { String(cString: $0) } }.sorted()
    }
}
