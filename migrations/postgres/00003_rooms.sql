-- +goose Up
-- The record of every room's settings, written on each admin write. Redis
-- holds the live copy; a Redis that lost its data is refilled from here.
CREATE TABLE rooms (
    name       TEXT        PRIMARY KEY,
    settings   JSONB       NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE rooms;
