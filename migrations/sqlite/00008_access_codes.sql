-- +goose Up
-- A room's access codes. A code is kept only as its HMAC-SHA256 under a
-- key derived from SECRET_KEY (code_hash), so that the table alone does
-- not give the codes away, even short ones uploaded from a CRM; hint is
-- its last three characters, for the console. A code admits to line
-- ('' is the room's only line) up to uses times, until expires_at.
CREATE TABLE access_codes (
    id         INTEGER  PRIMARY KEY AUTOINCREMENT,
    room       TEXT     NOT NULL,
    line       TEXT     NOT NULL DEFAULT '',
    code_hash  BLOB     NOT NULL,
    hint       TEXT     NOT NULL,
    uses       INTEGER  NOT NULL CHECK (uses >= 1),
    used       INTEGER  NOT NULL DEFAULT 0 CHECK (used >= 0 AND used <= uses),
    expires_at DATETIME,
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (room, code_hash)
);
CREATE INDEX access_codes_hash_idx ON access_codes (code_hash);

-- One row per visitor who redeemed a code: a visitor who presents the
-- same code again (another tab, a retry) uses it once.
CREATE TABLE access_redemptions (
    code_id     INTEGER  NOT NULL REFERENCES access_codes (id) ON DELETE CASCADE,
    visitor     TEXT     NOT NULL,
    redeemed_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (code_id, visitor)
);

-- +goose Down
DROP TABLE access_redemptions;
DROP TABLE access_codes;
