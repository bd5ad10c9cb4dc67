import Strongroom
import Testing

@Suite("Splitting SQL scripts")
struct SQLScriptTests {
    @Test func respectsStringsCommentsAndTriggerBodies() {
        let script = """
            CREATE TABLE t(x TEXT, "semi;colon" TEXT); -- a comment; with a semicolon
            INSERT INTO t VALUES ('a;b', 'it''s; fine');
            /* block; comment */
            CREATE TRIGGER t_ai AFTER INSERT ON t
            BEGIN
                INSERT INTO t VALUES ('nested;', NULL);
                UPDATE t SET x = 'END;' WHERE x = 'z';
            END;
            SELECT 1
            """
        let statements = SQLScript.statements(in: script)
        #expect(statements.count == 4)
        #expect(statements[0] == #"CREATE TABLE t(x TEXT, "semi;colon" TEXT);"#)
        #expect(statements[1].hasSuffix("INSERT INTO t VALUES ('a;b', 'it''s; fine');"))
        #expect(statements[2].contains("CREATE TRIGGER") && statements[2].hasSuffix("END;"))
        #expect(statements[3] == "SELECT 1")
    }

    @Test func dropsCommentOnlyTails() {
        #expect(SQLScript.statements(in: "SELECT 1;\n-- the end\n/* really */\n") == ["SELECT 1;"])
        #expect(SQLScript.statements(in: "  \n").isEmpty)
        // An empty statement is kept: migration checksums hash every
        // statement, and dropping it would change the checksum of an applied
        // migration written with ";;".
        #expect(SQLScript.statements(in: "CREATE TABLE t(x);;") == ["CREATE TABLE t(x);", ";"])
    }

    @Test func normalizationRemovesOnlyCosmetics() {
        #expect(SQLScript.normalized("CREATE TABLE t (\r\n  a INT, -- note\n  b TEXT DEFAULT 'x  y'\n)  ;")
            == "CREATE TABLE t(a INT,b TEXT DEFAULT 'x  y');")
        #expect(SQLScript.normalized("SELECT  \"a  b\" FROM t") == "SELECT \"a  b\" FROM t")
        #expect(SQLScript.normalized("SELECT 1") != SQLScript.normalized("SELECT 2"))
    }
}
