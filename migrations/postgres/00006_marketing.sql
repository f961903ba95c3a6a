-- +goose Up
-- Images uploaded for rooms (logo, link-preview image, favicon), kept by
-- the SHA-256 of their bytes: /media/{sha256}.{ext} names them forever.
CREATE TABLE images (
    sha256       TEXT        PRIMARY KEY,
    content_type TEXT        NOT NULL,
    width        INTEGER     NOT NULL,
    height       INTEGER     NOT NULL,
    data         BYTEA       NOT NULL,
    created_by   TEXT        NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Short links marketing shares: /s/{code} redirects to the room with the
-- link's UTM values, and counts its clicks.
CREATE TABLE share_links (
    code         TEXT        PRIMARY KEY,
    room         TEXT        NOT NULL,
    utm_source   TEXT        NOT NULL DEFAULT '',
    utm_medium   TEXT        NOT NULL DEFAULT '',
    utm_campaign TEXT        NOT NULL DEFAULT '',
    utm_content  TEXT        NOT NULL DEFAULT '',
    utm_term     TEXT        NOT NULL DEFAULT '',
    clicks       BIGINT      NOT NULL DEFAULT 0,
    created_by   TEXT        NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX share_links_room_idx ON share_links (room, created_at);

-- Ad click ids an order came with, beside its UTM values.
ALTER TABLE orders ADD COLUMN gclid TEXT;
ALTER TABLE orders ADD COLUMN fbclid TEXT;
ALTER TABLE orders ADD COLUMN ttclid TEXT;

-- +goose Down
ALTER TABLE orders DROP COLUMN ttclid;
ALTER TABLE orders DROP COLUMN fbclid;
ALTER TABLE orders DROP COLUMN gclid;
DROP TABLE share_links;
DROP TABLE images;
