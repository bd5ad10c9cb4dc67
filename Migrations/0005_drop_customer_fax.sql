-- Nobody sends faxes. SQLite 3.15 (SQLCipher 3.4.1) has no DROP COLUMN: the
-- runner rebuilds Customer with SQLite's 12-step procedure, foreign keys off
-- outside the transaction, so neither its Invoice nor its CustomerNote
-- children lose a row; foreign_key_check runs before commit.
ALTER TABLE Customer DROP COLUMN Fax;
