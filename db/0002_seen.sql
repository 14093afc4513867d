-- 0002_seen.sql: schema version 2 of the tuning database: the sizes that library calls served
-- without a tuned winner, and how often (see db/README.md). pmtune runs this file in one
-- transaction on a database whose user_version is 1. Never edit it once released.

-- The problems that serving met on a GPU and had no winner tuned for exactly (it ran the winner
-- of the nearest tuned size, or the built-in default), counted while recording is on;
-- `pmtune tune --seen` tunes the most-called of them. The problem is the numeric columns and
-- the canonical text, as in measurement: the text is the key (the numeric columns hold NULLs
-- where they do not apply, and NULLs are never equal in a UNIQUE constraint).
CREATE TABLE seen (
  id         INTEGER PRIMARY KEY,
  gpu_id     INTEGER NOT NULL REFERENCES gpu (id),
  op         TEXT    NOT NULL,
  dtype      TEXT    NOT NULL,
  rows       INTEGER CHECK (rows IS NULL OR rows >= 1),
  cols       INTEGER CHECK (cols IS NULL OR cols >= 1),
  n          INTEGER CHECK (n IS NULL OR n >= 1),
  radius     INTEGER CHECK (radius IS NULL OR radius >= 1),
  variant    TEXT    NOT NULL DEFAULT '',
  problem    TEXT    NOT NULL,
  calls      INTEGER NOT NULL CHECK (typeof(calls) = 'integer' AND calls >= 1),
  first_seen TEXT    NOT NULL,               -- the first recording that had it
  last_seen  TEXT    NOT NULL,               -- the last recording that had it
  UNIQUE (gpu_id, op, dtype, problem),
  CHECK ((n IS NULL AND rows IS NOT NULL AND cols IS NOT NULL)
         OR (n IS NOT NULL AND rows IS NULL AND cols IS NULL)),
  CHECK (first_seen <= last_seen)
);
-- The listing: one GPU's problems, most calls first.
CREATE INDEX seen_most_called ON seen (gpu_id, calls);

PRAGMA user_version = 2;
