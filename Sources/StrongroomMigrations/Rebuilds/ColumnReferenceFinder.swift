import Foundation
import Strongroom

/// Finds, in the SQL of a schema object, the tokens that refer to one column
/// of one table, resolving names the way SQLite does: through `FROM` clauses
/// and aliases, subqueries, `NEW.`/`OLD.` in triggers, foreign keys that name
/// the table as parent, and the table's own constraints.
///
/// A same-named column of another table, a function call such as `count(*)`,
/// a string literal, an alias or a collation name is never taken for the
/// column. Where a reference cannot be resolved with certainty (a `WITH`
/// clause, `USING` over the column, a view column whose name comes from the
/// column, a compound `ORDER BY` naming it), the finder says so instead of
/// guessing: the caller refuses the change, naming the object.
struct ColumnReferenceFinder {
    let table: String
    let column: String
    let catalog: SchemaCatalog

    /// Why a reference could not be resolved with certainty.
    struct Uncertain: Error {
        let reason: String
    }

    /// The scalar ranges in `object.sql` of the tokens that name the column.
    /// A trigger's `UPDATE OF` list counts unless `includingUpdateOfLists` is
    /// false (SQLite's DROP COLUMN leaves such a list alone: the trigger then
    /// never fires for that column).
    func references(in object: SchemaCatalog.Object, includingUpdateOfLists: Bool = true) throws(Uncertain) -> [Range<Int>] {
        let scan = Scan(sql: object.sql, finder: self)
        switch object.kind {
        case .table: try scan.createTable(named: object.tableName)
        case .index: try scan.createIndex(on: object.tableName)
        case .view: _ = try scan.createView()
        case .trigger: try scan.createTrigger(on: object.tableName)
        }
        let hits = includingUpdateOfLists ? scan.hits : scan.hits.subtracting(scan.updateOfHits)
        return hits.sorted().map { scan.tokens[$0].range }
    }

    /// The columns a view exposes, and which of them take their name from
    /// the column (renaming or dropping it changes them).
    fileprivate func exposedColumns(ofView name: String, visiting: Set<FoldedName>) throws(Uncertain) -> Set<FoldedName> {
        guard !visiting.contains(name.sqliteFolded), let view = catalog.object(named: name), view.kind == .view else { return [] }
        let scan = Scan(sql: view.sql, finder: self, visiting: visiting.union([name.sqliteFolded]))
        return try scan.createView().derived
    }
}

/// A table, view or subquery in a `FROM` clause, as a name resolves against it.
private struct Source {
    /// What qualifies its columns: the alias, else the table's name.
    var name: String
    /// True for the table whose column is sought.
    var isTarget: Bool
    var columns: [String]
    /// Lowercased names of columns whose name comes from the sought column.
    var derived: Set<FoldedName>

    static let opaque = Source(name: "", isTarget: false, columns: [], derived: [])

    func has(_ column: String) -> Bool {
        columns.contains { $0.sqliteFolded == column.sqliteFolded }
    }
}

/// Words with a grammatical role inside expressions; a column named like one
/// of them, written bare, cannot be resolved with certainty here.
private let expressionKeywords: Set<String> = [
    "AND", "OR", "NOT", "NULL", "IS", "IN", "LIKE", "GLOB", "MATCH", "REGEXP", "ESCAPE", "BETWEEN",
    "CASE", "WHEN", "THEN", "ELSE", "END", "EXISTS", "CAST", "AS", "COLLATE", "ISNULL", "NOTNULL",
    "DISTINCT", "ALL", "ASC", "DESC", "BY", "OF", "ON", "USING", "CURRENT_TIME", "CURRENT_DATE",
    "CURRENT_TIMESTAMP", "SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET",
    "UNION", "INTERSECT", "EXCEPT", "VALUES", "RAISE",
]

private let joinWords: Set<String> = ["NATURAL", "LEFT", "RIGHT", "FULL", "OUTER", "INNER", "CROSS", "JOIN"]
private let selectClauseWords: Set<String> = ["FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW"]

/// One pass over one object's tokens.
private final class Scan {
    let tokens: [SQLToken]
    let finder: ColumnReferenceFinder
    /// Index of each `(` → index of its `)`.
    private var closing: [Int: Int] = [:]
    /// Token indices naming the column.
    var hits: Set<Int> = []
    /// For a trigger: the table (or view) `NEW` and `OLD` stand for.
    private var triggerTable: String?
    /// Views being expanded, against cycles.
    private let visiting: Set<FoldedName>
    /// Common table expressions in scope (`WITH name AS (…)`), innermost last.
    private var commonTables: [[FoldedName: Source]] = []
    /// Hits in a trigger's `UPDATE OF` column list.
    var updateOfHits: Set<Int> = []

    init(sql: String, finder: ColumnReferenceFinder, visiting: Set<FoldedName> = []) {
        self.tokens = SQLTokenizer.tokenize(sql)
        self.finder = finder
        self.visiting = visiting
        var stack: [Int] = []
        for (index, token) in tokens.enumerated() {
            if token.text == "(" { stack.append(index) }
            if token.text == ")", let open = stack.popLast() { closing[open] = index }
        }
    }

    private var column: String { finder.column }

    // MARK: Token helpers

    private func isName(_ index: Int) -> Bool {
        index < tokens.count && (tokens[index].kind == .word || tokens[index].kind == .quotedIdentifier)
    }

    /// Where SQLite's grammar expects a table's name (FROM, REFERENCES, the
    /// target of INSERT, UPDATE or DELETE): the name, a 'string' included.
    private func tableReference(at index: Int) -> String? {
        guard index < tokens.count, isName(index) || tokens[index].kind == .string else { return nil }
        return tokens[index].name
    }

    /// True for an identifier token (not a string literal) naming the column.
    private func namesColumn(_ index: Int) -> Bool {
        tokens[index].kind != .string && tokens[index].names(column)
    }

    private func mentionsColumn(_ range: Range<Int>) -> Bool {
        range.contains { namesColumn($0) }
    }

    /// The whole object: a FROM clause not understood leaves every name in
    /// its SELECT (and the SELECTs around it) unresolved.
    private var everywhere: Range<Int> { 0..<tokens.count }

    private func end(of open: Int, within limit: Int) -> Int {
        min(closing[open] ?? limit, limit)
    }

    /// Index of the first token at depth 0 in `range` for which `test` holds.
    private func firstTopLevel(in range: Range<Int>, where test: (SQLToken) -> Bool) -> Int? {
        var i = range.lowerBound
        while i < range.upperBound {
            if tokens[i].text == "(" { i = end(of: i, within: range.upperBound) + 1; continue }
            if test(tokens[i]) { return i }
            i += 1
        }
        return nil
    }

    /// `range` split at depth-0 tokens for which `test` holds.
    private func split(_ range: Range<Int>, at test: (SQLToken) -> Bool) -> [Range<Int>] {
        var parts: [Range<Int>] = []
        var start = range.lowerBound
        var i = range.lowerBound
        while i < range.upperBound {
            if tokens[i].text == "(" { i = end(of: i, within: range.upperBound) + 1; continue }
            if test(tokens[i]) { parts.append(start..<i); start = i + 1 }
            i += 1
        }
        parts.append(start..<range.upperBound)
        return parts.filter { !$0.isEmpty }
    }

    private func startsSelect(_ index: Int) -> Bool {
        index < tokens.count && (tokens[index].isKeyword("SELECT") || tokens[index].isKeyword("VALUES") || tokens[index].isKeyword("WITH"))
    }

    /// Where SQLite's grammar expects a column's name (a column definition,
    /// a key's or an index's column list, `INSERT INTO t(…)`, `SET c =`), a
    /// token naming the column of the sought table. A 'string' is a name there.
    private func hitIfColumn(_ index: Int, of table: String) {
        guard table.sqliteFolded == finder.table.sqliteFolded, index < tokens.count else { return }
        if tokens[index].name?.sqliteFolded == column.sqliteFolded { hits.insert(index) }
    }

    /// A `FROM`-clause source for a table or view name.
    private func namedSource(_ name: String) throws(ColumnReferenceFinder.Uncertain) -> Source {
        for level in commonTables.reversed() {
            if var source = level[name.sqliteFolded] {
                source.name = name
                return source
            }
        }
        let object = finder.catalog.object(named: name)
        let columns = finder.catalog.columns(of: name) ?? []
        if object?.kind == .table && name.sqliteFolded == finder.table.sqliteFolded {
            return Source(name: name, isTarget: true, columns: columns, derived: [])
        }
        let derived = object?.kind == .view ? try finder.exposedColumns(ofView: name, visiting: visiting) : []
        return Source(name: name, isTarget: false, columns: columns, derived: derived)
    }

    // MARK: Objects

    /// `CREATE TABLE t (column definitions, table constraints)`.
    func createTable(named tableName: String) throws(ColumnReferenceFinder.Uncertain) {
        guard let open = tokens.firstIndex(where: { $0.text == "(" }) else { return }
        let close = end(of: open, within: tokens.count)
        let own = try namedSource(tableName)
        let scopes = [[own]]
        for item in split(open + 1..<close, at: { $0.text == "," }) {
            var k = item.lowerBound
            let first = tokens[k]
            let isConstraint = first.kind == .word && ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].contains(first.text.asciiUppercased)
            if !isConstraint {
                hitIfColumn(k, of: tableName)   // the column's name (a 'string' is a name here too)
                k += 1
            }
            while k < item.upperBound {
                let token = tokens[k]
                if token.isKeyword("CONSTRAINT") || token.isKeyword("COLLATE") { k += 2; continue }
                if (token.isKeyword("PRIMARY") || token.isKeyword("UNIQUE")) && isConstraint {
                    guard let listOpen = (k..<item.upperBound).first(where: { tokens[$0].text == "(" }) else { break }
                    let listClose = end(of: listOpen, within: item.upperBound)
                    for element in split(listOpen + 1..<listClose, at: { $0.text == "," }) { hitIfColumn(element.lowerBound, of: tableName) }
                    k = listClose + 1
                    continue
                }
                if token.isKeyword("FOREIGN"), let listOpen = (k..<item.upperBound).first(where: { tokens[$0].text == "(" }) {
                    let listClose = end(of: listOpen, within: item.upperBound)
                    for element in split(listOpen + 1..<listClose, at: { $0.text == "," }) { hitIfColumn(element.lowerBound, of: tableName) }
                    k = listClose + 1
                    continue
                }
                if token.isKeyword("REFERENCES"), let parent = tableReference(at: k + 1) {
                    k += 2
                    if k < item.upperBound, tokens[k].text == "(" {
                        let listClose = end(of: k, within: item.upperBound)
                        for element in split(k + 1..<listClose, at: { $0.text == "," }) { hitIfColumn(element.lowerBound, of: parent) }
                        k = listClose + 1
                    }
                    continue
                }
                if (token.isKeyword("CHECK") || token.isKeyword("AS")), k + 1 < item.upperBound, tokens[k + 1].text == "(" {
                    let checkClose = end(of: k + 1, within: item.upperBound)
                    try expression(k + 2..<checkClose, scopes)
                    k = checkClose + 1
                    continue
                }
                if token.text == "(" { k = end(of: k, within: item.upperBound) + 1; continue }
                k += 1
            }
        }
    }

    /// `CREATE [UNIQUE] INDEX name ON t (columns or expressions) [WHERE expr]`.
    func createIndex(on tableName: String) throws(ColumnReferenceFinder.Uncertain) {
        guard tableName.sqliteFolded == finder.table.sqliteFolded,
              let on = firstTopLevel(in: 0..<tokens.count, where: { $0.isKeyword("ON") }),
              let open = (on..<tokens.count).first(where: { tokens[$0].text == "(" }) else { return }
        let close = end(of: open, within: tokens.count)
        let scopes = [[try namedSource(tableName)]]
        for element in split(open + 1..<close, at: { $0.text == "," }) {
            // SQLite takes a lone 'string' in an index's column list for a name.
            let isLoneString = tokens[element.lowerBound].kind == .string && element.dropFirst().allSatisfy { j in
                tokens[j].isKeyword("ASC") || tokens[j].isKeyword("DESC") || tokens[j].isKeyword("COLLATE") || tokens[j - 1].isKeyword("COLLATE")
            }
            if isLoneString {
                hitIfColumn(element.lowerBound, of: tableName)
                continue
            }
            try expression(element, scopes)
        }
        if close + 1 < tokens.count, tokens[close + 1].isKeyword("WHERE") {
            try expression(close + 2..<tokens.count, scopes)
        }
    }

    /// `CREATE VIEW name [(columns)] AS select`: the columns it exposes.
    func createView() throws(ColumnReferenceFinder.Uncertain) -> Source {
        guard let asIndex = firstTopLevel(in: 0..<tokens.count, where: { $0.isKeyword("AS") }) else { return .opaque }
        let exposed = try select(asIndex + 1..<tokens.count, outer: [])
        // An explicit column list names the view's columns.
        if let open = tokens[..<asIndex].firstIndex(where: { $0.text == "(" }), open < asIndex {
            return Source(name: "", isTarget: false, columns: split(open + 1..<end(of: open, within: asIndex), at: { $0.text == "," }).compactMap { tokens[$0.lowerBound].identifier }, derived: [])
        }
        return exposed
    }

    /// `CREATE TRIGGER name … [UPDATE OF columns] ON t [WHEN expr] BEGIN statements END`.
    func createTrigger(on tableName: String) throws(ColumnReferenceFinder.Uncertain) {
        guard let on = firstTopLevel(in: 0..<tokens.count, where: { $0.isKeyword("ON") }),
              let begin = firstTopLevel(in: on..<tokens.count, where: { $0.isKeyword("BEGIN") }),
              let last = tokens.lastIndex(where: { $0.isKeyword("END") }), last > begin else {
            if mentionsColumn(0..<tokens.count) { throw .init(reason: "could not be read") }
            return
        }
        triggerTable = tableName
        if let of = (0..<on).first(where: { tokens[$0].isKeyword("OF") }) {
            let before = hits
            for element in split(of + 1..<on, at: { $0.text == "," }) { hitIfColumn(element.lowerBound, of: tableName) }
            updateOfHits = hits.subtracting(before)
        }
        if let when = (on..<begin).first(where: { tokens[$0].isKeyword("WHEN") }) {
            try expression(when + 1..<begin, [])
        }
        for statement in split(begin + 1..<last, at: { $0.kind == .punctuation && $0.text == ";" }) {
            try triggerStatement(statement)
        }
    }

    // MARK: Statements in a trigger body

    private func triggerStatement(_ range: Range<Int>) throws(ColumnReferenceFinder.Uncertain) {
        let first = tokens[range.lowerBound]
        var k = range.lowerBound + 1
        if first.isKeyword("SELECT") || first.isKeyword("VALUES") {
            _ = try select(range, outer: [])
        } else if first.isKeyword("INSERT") || first.isKeyword("REPLACE") {
            if k < range.upperBound, tokens[k].isKeyword("OR") { k += 2 }
            if k < range.upperBound, tokens[k].isKeyword("INTO") { k += 1 }
            guard let target = tableReference(at: k) else { return }
            k += 1
            if k < range.upperBound, tokens[k].text == "(", !startsSelect(k + 1) {
                let close = end(of: k, within: range.upperBound)
                for element in split(k + 1..<close, at: { $0.text == "," }) { hitIfColumn(element.lowerBound, of: target) }
                k = close + 1
            }
            guard k < range.upperBound else { return }
            if tokens[k].isKeyword("VALUES") {
                try expression(k + 1..<range.upperBound, [])
            } else if startsSelect(k) {
                _ = try select(k..<range.upperBound, outer: [])
            } else if mentionsColumn(k..<range.upperBound) {
                throw .init(reason: "has an INSERT whose form is not understood here")
            }
        } else if first.isKeyword("UPDATE") {
            if k < range.upperBound, tokens[k].isKeyword("OR") { k += 2 }
            guard let target = tableReference(at: k),
                  let set = firstTopLevel(in: k..<range.upperBound, where: { $0.isKeyword("SET") }) else { return }
            let scopes = [[try namedSource(target)]]
            let whereIndex = firstTopLevel(in: set..<range.upperBound, where: { $0.isKeyword("WHERE") || $0.isKeyword("FROM") })
            if let whereIndex, tokens[whereIndex].isKeyword("FROM"), mentionsColumn(whereIndex..<range.upperBound) {
                throw .init(reason: "has an UPDATE … FROM")
            }
            for assignment in split(set + 1..<(whereIndex ?? range.upperBound), at: { $0.text == "," }) {
                guard let equals = firstTopLevel(in: assignment, where: { $0.text == "=" }) else { continue }
                if tokens[assignment.lowerBound].text == "(" {
                    for element in split(assignment.lowerBound + 1..<end(of: assignment.lowerBound, within: equals), at: { $0.text == "," }) {
                        hitIfColumn(element.lowerBound, of: target)
                    }
                } else {
                    hitIfColumn(assignment.lowerBound, of: target)
                }
                try expression(equals + 1..<assignment.upperBound, scopes)
            }
            if let whereIndex { try expression(whereIndex + 1..<range.upperBound, scopes) }
        } else if first.isKeyword("DELETE") {
            if k < range.upperBound, tokens[k].isKeyword("FROM") { k += 1 }
            guard let target = tableReference(at: k) else { return }
            let scopes = [[try namedSource(target)]]
            if let whereIndex = firstTopLevel(in: k..<range.upperBound, where: { $0.isKeyword("WHERE") }) {
                try expression(whereIndex + 1..<range.upperBound, scopes)
            }
        } else if mentionsColumn(range) {
            throw .init(reason: "has a statement (\(first.text.asciiUppercased) …) whose names are not resolved here")
        }
    }

    // MARK: SELECT

    /// Resolves a (possibly compound) SELECT and returns the columns it exposes.
    private func select(_ range: Range<Int>, outer: [[Source]]) throws(ColumnReferenceFinder.Uncertain) -> Source {
        guard !range.isEmpty else { return .opaque }
        if tokens[range.lowerBound].isKeyword("WITH") {
            return try withClause(range, outer: outer)
        }
        let arms = split(range, at: { $0.isKeyword("UNION") || $0.isKeyword("INTERSECT") || $0.isKeyword("EXCEPT") })
            .map { arm in tokens[arm.lowerBound].isKeyword("ALL") ? arm.dropFirst() : arm }
        if arms.count == 1 { return try simpleSelect(arms[0], outer: outer) }
        var exposedArms: [Source] = []
        var tail: Range<Int>?
        for (n, arm) in arms.enumerated() {
            var armRange = arm
            if n == arms.count - 1, let start = firstTopLevel(in: arm, where: { $0.isKeyword("ORDER") || $0.isKeyword("LIMIT") }) {
                armRange = arm.lowerBound..<start
                tail = start..<arm.upperBound
            }
            exposedArms.append(try simpleSelect(armRange, outer: outer))
        }
        if let tail { try compoundOrderBy(tail, arms: exposedArms) }
        return exposedArms[0]
    }

    /// The ORDER BY of a compound SELECT names result columns: a term naming
    /// the column refers to the first arm with a result column of that name,
    /// and follows the column's new name when that result column takes its
    /// name from the column.
    private func compoundOrderBy(_ tail: Range<Int>, arms: [Source]) throws(ColumnReferenceFinder.Uncertain) {
        let limit = firstTopLevel(in: tail, where: { $0.isKeyword("LIMIT") }) ?? tail.upperBound
        if mentionsColumn(limit..<tail.upperBound) { throw .init(reason: "names the column in the LIMIT of a compound SELECT") }
        // ORDER BY and its terms (a statement cut after ORDER is not SQL SQLite runs).
        guard tokens[tail.lowerBound].isKeyword("ORDER"), tail.lowerBound + 2 <= limit else { return }
        for term in split(tail.lowerBound + 2..<limit, at: { $0.text == "," }) where mentionsColumn(term) {
            let modifiers = term.dropFirst().allSatisfy { j in
                tokens[j].isKeyword("ASC") || tokens[j].isKeyword("DESC") || tokens[j].isKeyword("COLLATE") || tokens[j - 1].isKeyword("COLLATE")
            }
            guard isName(term.lowerBound), modifiers, let name = tokens[term.lowerBound].identifier else {
                throw .init(reason: "names the column in an expression of a compound SELECT's ORDER BY")
            }
            if let arm = arms.first(where: { $0.has(name) }), arm.derived.contains(name.sqliteFolded) {
                hits.insert(term.lowerBound)
            }
        }
    }

    /// `WITH [RECURSIVE] name [(columns)] AS (select), … select`: each common
    /// table becomes a source the following ones and the main SELECT can use.
    private func withClause(_ range: Range<Int>, outer: [[Source]]) throws(ColumnReferenceFinder.Uncertain) -> Source {
        var k = range.lowerBound + 1
        if k < range.upperBound, tokens[k].isKeyword("RECURSIVE") { k += 1 }
        commonTables.append([:])
        defer { commonTables.removeLast() }
        while k < range.upperBound, isName(k), let name = tokens[k].identifier {
            k += 1
            var explicitColumns: [String]?
            if k < range.upperBound, tokens[k].text == "(" {
                let close = end(of: k, within: range.upperBound)
                explicitColumns = split(k + 1..<close, at: { $0.text == "," }).compactMap { tokens[$0.lowerBound].identifier }
                k = close + 1
            }
            guard k < range.upperBound, tokens[k].isKeyword("AS") else { break }
            k += 1
            while k < range.upperBound, tokens[k].isKeyword("NOT") || tokens[k].isKeyword("MATERIALIZED") { k += 1 }
            guard k < range.upperBound, tokens[k].text == "(" else { break }
            let close = end(of: k, within: range.upperBound)
            let exposed = try select(k + 1..<close, outer: outer)
            commonTables[commonTables.count - 1][name.sqliteFolded] = explicitColumns.map { Source(name: name, isTarget: false, columns: $0, derived: []) }
                ?? Source(name: name, isTarget: false, columns: exposed.columns, derived: exposed.derived)
            k = close + 1
            guard k < range.upperBound, tokens[k].text == "," else { break }
            k += 1
        }
        guard k < range.upperBound, startsSelect(k) else {
            if mentionsColumn(range) { throw .init(reason: "has a WITH clause not understood here") }
            return .opaque
        }
        return try select(k..<range.upperBound, outer: outer)
    }

    private func simpleSelect(_ range: Range<Int>, outer: [[Source]]) throws(ColumnReferenceFinder.Uncertain) -> Source {
        // An empty arm (`… UNION ALL` at the end): not SQL SQLite runs, and nothing to read.
        guard !range.isEmpty else { return .opaque }
        var i = range.lowerBound
        if tokens[i].isKeyword("VALUES") {
            try expression(i + 1..<range.upperBound, outer)
            return .opaque
        }
        guard tokens[i].isKeyword("SELECT") else {
            if mentionsColumn(range) { throw .init(reason: "has a SELECT whose form is not understood here") }
            return .opaque
        }
        i += 1
        if i < range.upperBound, tokens[i].isKeyword("DISTINCT") || tokens[i].isKeyword("ALL") { i += 1 }
        // The clauses, each up to the next.
        var clauses: [(word: String, start: Int)] = []
        var k = i
        while k < range.upperBound {
            if tokens[k].text == "(" { k = end(of: k, within: range.upperBound) + 1; continue }
            if tokens[k].kind == .word, selectClauseWords.contains(tokens[k].text.asciiUppercased) { clauses.append((tokens[k].text.asciiUppercased, k)) }
            k += 1
        }
        func clause(_ word: String) -> Range<Int>? {
            guard let n = clauses.firstIndex(where: { $0.word == word }) else { return nil }
            let start = clauses[n].start + (word == "GROUP" || word == "ORDER" ? 2 : 1)
            let stop = n + 1 < clauses.count ? clauses[n + 1].start : range.upperBound
            return min(start, stop)..<stop
        }
        let results = i..<(clauses.first?.start ?? range.upperBound)

        var sources: [Source] = []
        var joinConditions: [Range<Int>] = []
        if let from = clause("FROM") {
            try fromClause(from, outer: outer, sources: &sources, conditions: &joinConditions)
        }
        let scopes = outer + [sources]

        var exposed = Source(name: "", isTarget: false, columns: [], derived: [])
        var aliases = Set<FoldedName>()
        for item in split(results, at: { $0.text == "," }) {
            let last = item.upperBound - 1
            if tokens[last].text == "*" {
                let chosen = item.count == 1 ? sources : sources.filter { isName(item.lowerBound) && $0.name.sqliteFolded == tokens[item.lowerBound].identifier?.sqliteFolded }
                for source in chosen {
                    exposed.columns += source.columns
                    if source.isTarget && source.has(column) { exposed.derived.insert(column.sqliteFolded) }
                    exposed.derived.formUnion(source.derived)
                }
                continue
            }
            var expressionRange = item
            var alias: String?
            if let asIndex = firstTopLevel(in: item, where: { $0.isKeyword("AS") }), asIndex + 1 < item.upperBound {
                alias = tokens[asIndex + 1].identifier ?? tokens[asIndex + 1].text
                expressionRange = item.lowerBound..<asIndex
            } else if item.count >= 2, isName(last), !expressionKeywords.contains(tokens[last].text.asciiUppercased) || tokens[last].kind == .quotedIdentifier,
                      tokens[last - 1].text != ".", tokens[last - 1].kind != .punctuation || tokens[last - 1].text == ")",
                      !(tokens[last - 1].kind == .word && expressionKeywords.contains(tokens[last - 1].text.asciiUppercased)) {
                alias = tokens[last].identifier
                expressionRange = item.lowerBound..<last
            }
            let hitsBefore = hits.count
            try expression(expressionRange, scopes)
            let isChain = expressionRange.count == 1 || (expressionRange.count >= 3 && (expressionRange.lowerBound..<last).allSatisfy { ($0 - expressionRange.lowerBound) % 2 == 1 ? tokens[$0].text == "." : isName($0) })
            if let alias {
                exposed.columns.append(alias)
                aliases.insert(alias.sqliteFolded)
            } else if isChain, let name = tokens[expressionRange.upperBound - 1].identifier {
                exposed.columns.append(name)
                if hits.count > hitsBefore, name.sqliteFolded == column.sqliteFolded { exposed.derived.insert(name.sqliteFolded) }
            } else {
                exposed.columns.append("")
            }
        }
        for condition in joinConditions { try expression(condition, scopes) }
        for word in ["WHERE", "GROUP", "HAVING", "LIMIT"] {
            if let range = clause(word) { try expression(range, scopes) }
        }
        if let order = clause("ORDER") {
            for term in split(order, at: { $0.text == "," }) {
                // A bare name that is a result alias names that result column.
                if isName(term.lowerBound), let name = tokens[term.lowerBound].identifier, aliases.contains(name.sqliteFolded),
                   term.count == 1 || tokens[term.lowerBound + 1].kind == .word {
                    continue
                }
                try expression(term, scopes)
            }
        }
        if let window = clause("WINDOW"), mentionsColumn(window) { throw .init(reason: "names the column in a WINDOW clause") }
        return exposed
    }

    private func fromClause(_ range: Range<Int>, outer: [[Source]], sources: inout [Source], conditions: inout [Range<Int>]) throws(ColumnReferenceFinder.Uncertain) {
        var i = range.lowerBound
        func isJoinWord(_ index: Int) -> Bool {
            tokens[index].text == "," || (tokens[index].kind == .word && joinWords.contains(tokens[index].text.asciiUppercased))
        }
        while i < range.upperBound {
            if isJoinWord(i) { i += 1; continue }
            var source: Source
            if tokens[i].text == "(" {
                let close = end(of: i, within: range.upperBound)
                if startsSelect(i + 1) {
                    source = try select(i + 1..<close, outer: outer)
                } else {
                    if mentionsColumn(everywhere) { throw .init(reason: "has a parenthesized join") }
                    source = .opaque
                }
                i = close + 1
            } else if let first = tableReference(at: i) {
                var name = first
                i += 1
                if i + 1 < range.upperBound, tokens[i].text == ".", let qualified = tableReference(at: i + 1) {
                    name = qualified
                    i += 2
                }
                if i < range.upperBound, tokens[i].text == "(" {
                    if mentionsColumn(everywhere) { throw .init(reason: "uses a table-valued function") }
                    i = end(of: i, within: range.upperBound) + 1
                    source = .opaque
                } else {
                    source = try namedSource(name)
                }
            } else {
                if mentionsColumn(everywhere) { throw .init(reason: "has a FROM clause not understood here") }
                return
            }
            // An alias, with or without AS ('string' aliases too).
            if i < range.upperBound, tokens[i].isKeyword("AS"), i + 1 < range.upperBound {
                source.name = tokens[i + 1].name ?? source.name
                i += 2
            } else if i < range.upperBound, (isName(i) || tokens[i].kind == .string), !isJoinWord(i),
                      !["ON", "USING", "INDEXED", "NOT"].contains(tokens[i].text.asciiUppercased) || tokens[i].kind != .word {
                source.name = tokens[i].name ?? source.name
                i += 1
            }
            if i < range.upperBound, tokens[i].isKeyword("INDEXED") { i += 3 }
            if i < range.upperBound, tokens[i].isKeyword("NOT") { i += 2 }
            sources.append(source)
            if i < range.upperBound, tokens[i].isKeyword("ON") {
                var j = i + 1
                while j < range.upperBound && !isJoinWord(j) {
                    if tokens[j].text == "(" { j = end(of: j, within: range.upperBound) }
                    j += 1
                }
                // An unclosed parenthesis ends at the range's end, not past it.
                j = min(j, range.upperBound)
                conditions.append(i + 1..<j)
                i = j
            } else if i < range.upperBound, tokens[i].isKeyword("USING"), i + 1 < range.upperBound, tokens[i + 1].text == "(" {
                let close = end(of: i + 1, within: range.upperBound)
                if mentionsColumn(i..<close), sources.contains(where: { ($0.isTarget && $0.has(column)) || $0.derived.contains(column.sqliteFolded) }) {
                    throw .init(reason: "joins USING the column")
                }
                i = close + 1
            }
        }
    }

    // MARK: Expressions

    /// Resolves every name in an expression (with its subqueries) against `scopes`, innermost last.
    private func expression(_ range: Range<Int>, _ scopes: [[Source]]) throws(ColumnReferenceFinder.Uncertain) {
        var i = range.lowerBound
        while i < range.upperBound {
            let token = tokens[i]
            if token.text == "(" {
                let close = end(of: i, within: range.upperBound)
                let previous = i > range.lowerBound ? tokens[i - 1] : nil
                if startsSelect(i + 1) {
                    _ = try select(i + 1..<close, outer: scopes)
                } else if previous?.isKeyword("RAISE") == true {
                    // RAISE(ABORT, 'message'): a keyword and a string.
                } else if previous?.isKeyword("CAST") == true {
                    let asIndex = firstTopLevel(in: i + 1..<close, where: { $0.isKeyword("AS") }) ?? close
                    try expression(i + 1..<asIndex, scopes)
                } else {
                    try expression(i + 1..<close, scopes)
                }
                i = close + 1
                continue
            }
            if token.isKeyword("COLLATE") { i += 2; continue }
            guard isName(i) else { i += 1; continue }
            // A name, or a chain of names: [schema.]table.column.
            var parts = [i]
            while let last = parts.last, last + 2 < range.upperBound, tokens[last + 1].text == ".", isName(last + 2) {
                parts.append(last + 2)
            }
            let after = parts.last! + 1
            if after < range.upperBound, tokens[after].text == "(" {
                i = after   // a function's name; its arguments are scanned next
                continue
            }
            try reference(parts, scopes)
            i = after
        }
    }

    private func reference(_ parts: [Int], _ scopes: [[Source]]) throws(ColumnReferenceFinder.Uncertain) {
        let index = parts.last!
        guard namesColumn(index) else { return }
        if parts.count == 1 {
            if tokens[index].kind == .word, expressionKeywords.contains(tokens[index].text.asciiUppercased) {
                throw .init(reason: "uses the bare word \(tokens[index].text), which is both the column's name and an SQL keyword")
            }
            try unqualified(index, scopes)
            return
        }
        let qualifier = tokens[parts[parts.count - 2]].identifier ?? ""
        for scope in scopes.reversed() {
            if let source = scope.first(where: { $0.name.sqliteFolded == qualifier.sqliteFolded }) {
                try use(source, index)
                return
            }
        }
        if let triggerTable, ["new".sqliteFolded, "old".sqliteFolded].contains(qualifier.sqliteFolded) {
            try use(try namedSource(triggerTable), index)
            return
        }
        if qualifier.sqliteFolded == finder.table.sqliteFolded {
            throw .init(reason: "names \(qualifier).\(column) where \(qualifier) is not in a FROM clause")
        }
    }

    private func unqualified(_ index: Int, _ scopes: [[Source]]) throws(ColumnReferenceFinder.Uncertain) {
        for scope in scopes.reversed() {
            let having = scope.filter { $0.has(column) }
            if having.isEmpty { continue }
            if having.count > 1 {
                if having.contains(where: { $0.isTarget || $0.derived.contains(column.sqliteFolded) }) {
                    throw .init(reason: "uses an unqualified \(column) that several tables in its FROM clause have")
                }
                return
            }
            try use(having[0], index)
            return
        }
    }

    private func use(_ source: Source, _ index: Int) throws(ColumnReferenceFinder.Uncertain) {
        if source.isTarget {
            hits.insert(index)
        } else if source.derived.contains(column.sqliteFolded) {
            throw .init(reason: "uses the column \(column) of \(source.name.isEmpty ? "a subquery" : source.name), whose name comes from \(finder.table).\(column)")
        }
    }
}
