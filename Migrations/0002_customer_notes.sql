-- Notes that support staff keep about a customer. A customer's notes go with
-- the customer (ON DELETE CASCADE): a table rebuild of Customer that left
-- foreign keys on would delete them all.
CREATE TABLE CustomerNote (
    NoteId     INTEGER PRIMARY KEY,
    CustomerId INTEGER NOT NULL REFERENCES Customer (CustomerId) ON DELETE CASCADE,
    Body       TEXT    NOT NULL,
    CreatedAt  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

CREATE INDEX IX_CustomerNote_CustomerId ON CustomerNote (CustomerId);

-- One welcome note per existing customer; the text holds a ';' on purpose.
INSERT INTO CustomerNote (CustomerId, Body)
SELECT CustomerId, 'Welcome; first contact by ' || coalesce(Email, 'mail') FROM Customer;
