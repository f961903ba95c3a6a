-- +goose Up
CREATE TABLE rooms (
    name       TEXT     PRIMARY KEY,
    settings   TEXT     NOT NULL,
    updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose Down
DROP TABLE rooms;
