-- Customers. `email` and `note` hold sealed envelopes (the field keyring
-- opens them, not the database key); `email_index` is the e-mail's blind
-- index, UNIQUE: no two customers share an address, and the service finds a
-- customer by e-mail without opening a row.
CREATE TABLE customer (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email BLOB NOT NULL,
  note BLOB,
  country TEXT,
  email_index BLOB
);
CREATE UNIQUE INDEX customer_email_index ON customer(email_index);
