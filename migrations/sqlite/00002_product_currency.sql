-- +goose Up
ALTER TABLE products ADD COLUMN currency TEXT NOT NULL DEFAULT 'KRW'
    CHECK (currency GLOB '[A-Z][A-Z][A-Z]');

-- +goose Down
ALTER TABLE products DROP COLUMN currency;
