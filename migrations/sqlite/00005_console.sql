-- +goose Up
-- The console's operators, signed in with argon2id-hashed passwords
-- (`waitingroom admin add-user`).
CREATE TABLE operators (
    name          TEXT     PRIMARY KEY,
    password_hash TEXT     NOT NULL,
    created_at    DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- Console sessions: the cookie holds a random secret, the table only its
-- SHA-256. operator is an operator's name, or "admin" for ADMIN_TOKEN.
CREATE TABLE admin_sessions (
    id_hash    BLOB     PRIMARY KEY,
    operator   TEXT     NOT NULL,
    csrf       TEXT     NOT NULL,
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    expires_at DATETIME NOT NULL
);
CREATE INDEX admin_sessions_expires_idx ON admin_sessions (expires_at);

-- Who changed what, when: every console and admin API change, and the
-- sale's own events (sold out), which the dashboard's timeline shows.
CREATE TABLE audit_log (
    id        INTEGER  PRIMARY KEY AUTOINCREMENT,
    at        DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    actor     TEXT     NOT NULL,
    room      TEXT     NOT NULL DEFAULT '',
    action    TEXT     NOT NULL,
    target    TEXT     NOT NULL DEFAULT '',
    old_value TEXT,
    new_value TEXT
);
CREATE INDEX audit_log_room_idx ON audit_log (room, id);

-- A product's picture, shown on the order form.
ALTER TABLE products ADD COLUMN image_url TEXT NOT NULL DEFAULT '';

-- An order is placed, or cancelled by an operator (its stock comes back).
ALTER TABLE orders ADD COLUMN status TEXT NOT NULL DEFAULT 'placed'
    CHECK (status IN ('placed', 'cancelled'));
CREATE INDEX orders_room_created_idx ON orders (room, created_at);

-- +goose Down
DROP INDEX orders_room_created_idx;
ALTER TABLE orders DROP COLUMN status;
ALTER TABLE products DROP COLUMN image_url;
DROP TABLE audit_log;
DROP TABLE admin_sessions;
DROP TABLE operators;
