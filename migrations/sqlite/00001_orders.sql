-- +goose Up
CREATE TABLE products (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    room       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    price      INTEGER NOT NULL CHECK (price >= 0),
    stock      INTEGER NOT NULL CHECK (stock >= 0),
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX products_room_idx ON products (room);

CREATE TABLE orders (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    room             TEXT    NOT NULL,
    product_id       INTEGER NOT NULL REFERENCES products (id),
    visitor          TEXT    NOT NULL,
    quantity         INTEGER NOT NULL CHECK (quantity > 0),
    entry_token_hash BLOB    NOT NULL,
    idempotency_key  TEXT,
    utm_source       TEXT,
    utm_medium       TEXT,
    utm_campaign     TEXT,
    utm_term         TEXT,
    utm_content      TEXT,
    created_at       DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT orders_entry_token_hash_key UNIQUE (entry_token_hash),
    CONSTRAINT orders_idempotency_key UNIQUE (room, visitor, idempotency_key)
);
CREATE INDEX orders_room_idx ON orders (room);

-- +goose Down
DROP TABLE orders;
DROP TABLE products;
