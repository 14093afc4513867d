-- 0001_initial.sql: schema version 1 of the tuning database (see db/README.md for the queries).
-- pmtune runs this file in one transaction on a database whose user_version is 0. Never edit it
-- once released: a change of schema is a new file, NNNN_what.sql, that ends by setting
-- user_version to NNNN. Times are UTC text, 'YYYY-MM-DDTHH:MM:SS.SSSZ'.

PRAGMA application_id = 1886221429; -- 0x706d7475, 'pmtu': marks the file as pmtune's

-- The GPUs seen. A GPU is its UUID; its model is (name, cc, sm_count, mem_bytes), and results
-- measured on one GPU are served to every GPU of the same model.
CREATE TABLE gpu (
  id              INTEGER PRIMARY KEY,
  uuid            TEXT    NOT NULL UNIQUE,    -- 'GPU-xxxxxxxx-...', as nvidia-smi -L shows it
  name            TEXT    NOT NULL,           -- 'NVIDIA H100 80GB HBM3'
  cc_major        INTEGER NOT NULL,
  cc_minor        INTEGER NOT NULL,
  arch            TEXT    NOT NULL,           -- 'sm_90'
  sm_count        INTEGER NOT NULL,
  mem_bytes       INTEGER NOT NULL,
  driver_version  INTEGER NOT NULL,           -- cudaDriverGetVersion: 12040 is 12.4; 0 unknown
  runtime_version INTEGER NOT NULL,           -- cudaRuntimeGetVersion, same encoding
  first_seen      TEXT    NOT NULL,
  last_seen       TEXT    NOT NULL
);

-- The template versions seen, by content hash. current = 1 marks, per op, the template of the
-- pmtune that last opened the database for writing: the winner view shows only its rows.
CREATE TABLE template (
  sha256     TEXT    PRIMARY KEY NOT NULL
             CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
  op         TEXT    NOT NULL,
  current    INTEGER NOT NULL DEFAULT 0 CHECK (current IN (0, 1)),
  first_seen TEXT    NOT NULL
);
CREATE UNIQUE INDEX template_one_current ON template (op) WHERE current = 1;

-- Every tuning run: when, which pmtune, which command line, how it ended. A run killed before
-- it ended stays 'running' until the next run on the same host finds its process gone and
-- marks it 'interrupted'.
CREATE TABLE run (
  id             INTEGER PRIMARY KEY,
  started_at     TEXT    NOT NULL,
  ended_at       TEXT,
  pmtune_version TEXT    NOT NULL,
  nvrtc_version  TEXT    NOT NULL,
  command_line   TEXT    NOT NULL,
  host           TEXT    NOT NULL,
  pid            INTEGER NOT NULL,
  gpu_id         INTEGER REFERENCES gpu (id),
  status         TEXT    NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
  message        TEXT                         -- how it ended, in words
);

-- Every measurement: one row per (GPU, op, dtype, problem, configuration, template version).
-- The problem is both numeric columns (NULL where they do not apply) and its canonical text:
--   matadd  rows, cols, variant 'order=row' | 'order=col'   problem 'rows=R cols=C order=row'
--   reduce  n,          variant ''                          problem 'n=N'
--   filter  rows, cols, radius 1..3,
--           variant 'border=clamp' | 'border=zero'  problem 'rows=R cols=C radius=K border=zero'
-- The configuration is its readable text ('bx=32 by=8 vec=4') and the same as a JSON object
-- ({"bx":32,"by":8,"vec":4}) for json_extract; the text is always the JSON's keys and values in
-- order, joined by spaces.
CREATE TABLE measurement (
  id              INTEGER PRIMARY KEY,
  gpu_id          INTEGER NOT NULL REFERENCES gpu (id),
  op              TEXT    NOT NULL,
  dtype           TEXT    NOT NULL,
  rows            INTEGER,
  cols            INTEGER,
  n               INTEGER,
  radius          INTEGER,
  variant         TEXT    NOT NULL DEFAULT '',
  problem         TEXT    NOT NULL,
  config          TEXT    NOT NULL,
  params          TEXT    NOT NULL CHECK (json_valid(params) AND json_type(params) = 'object'),
  is_seed         INTEGER NOT NULL DEFAULT 0 CHECK (is_seed IN (0, 1)),
  template_sha256 TEXT    NOT NULL REFERENCES template (sha256),
  status          TEXT    NOT NULL
                  CHECK (status IN ('ok', 'compile_error', 'launch_error', 'wrong_result')),
  error           TEXT,                       -- why it failed (the compiler log, ...); NULL if ok
  median_ms       REAL,                       -- timings: NULL unless status is 'ok'
  min_ms          REAL,
  max_ms          REAL,
  samples         INTEGER,
  gbps            REAL,                       -- bandwidth reached at the median
  verified        INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
  max_error       REAL,                       -- largest difference from the reference
  run_id          INTEGER REFERENCES run (id),
  measured_at     TEXT    NOT NULL,
  UNIQUE (gpu_id, op, dtype, problem, config, template_sha256),
  CHECK (status <> 'ok' OR (median_ms > 0 AND min_ms > 0 AND min_ms <= median_ms
                            AND median_ms <= max_ms AND samples >= 1 AND gbps >= 0)),
  CHECK (status = 'ok' OR error IS NOT NULL)
);
-- At most one seed configuration per problem.
CREATE UNIQUE INDEX measurement_one_seed
  ON measurement (gpu_id, op, dtype, problem, template_sha256) WHERE is_seed = 1;
-- Lookups across GPUs of one model, and the nearest tuned size.
CREATE INDEX measurement_by_problem ON measurement (op, dtype, variant, template_sha256);

-- Compiled cubins. A cubin is served only for the exact key: a new template, other defines,
-- another architecture, NVRTC version or driver version compile anew.
CREATE TABLE cubin (
  id              INTEGER PRIMARY KEY,
  template_sha256 TEXT    NOT NULL,
  defines         TEXT    NOT NULL,           -- canonical: '-DBX=32 -DBY=8', sorted
  arch            TEXT    NOT NULL,           -- 'sm_90'
  nvrtc_version   TEXT    NOT NULL,           -- '13.0'
  driver_version  INTEGER NOT NULL,           -- as in gpu; 0 when compiled without a driver
  data            BLOB    NOT NULL,
  size            INTEGER NOT NULL CHECK (size = length(data) AND size > 0),
  compile_ms      REAL,
  created_at      TEXT    NOT NULL,
  UNIQUE (template_sha256, defines, arch, nvrtc_version, driver_version)
);

-- Measurements of the current template of each op: the only ones ever served.
CREATE VIEW current_measurement AS
SELECT m.*
  FROM measurement m
  JOIN template t ON t.sha256 = m.template_sha256 AND t.current = 1;

-- The winner per (GPU, op, dtype, problem): the fastest verified configuration of the current
-- template, and its speedup over the seed configuration (NULL where the seed was not measured).
CREATE VIEW winner AS
WITH ranked AS (
  SELECT m.*, row_number() OVER (PARTITION BY m.gpu_id, m.op, m.dtype, m.problem
                                 ORDER BY m.median_ms, m.id) AS rank
    FROM current_measurement m
   WHERE m.status = 'ok' AND m.verified = 1
)
SELECT r.gpu_id, g.uuid AS gpu_uuid, g.name AS gpu_name,
       r.op, r.dtype, r.problem, r.rows, r.cols, r.n, r.radius, r.variant,
       r.config, r.params, r.median_ms, r.min_ms, r.max_ms, r.samples, r.gbps, r.max_error,
       r.is_seed, s.config AS seed_config, s.median_ms AS seed_median_ms,
       s.median_ms / r.median_ms AS speedup,
       r.template_sha256, r.measured_at, r.id AS measurement_id, s.id AS seed_measurement_id
  FROM ranked r
  JOIN gpu g ON g.id = r.gpu_id
  LEFT JOIN measurement s
    ON s.gpu_id = r.gpu_id AND s.op = r.op AND s.dtype = r.dtype AND s.problem = r.problem
   AND s.template_sha256 = r.template_sha256 AND s.is_seed = 1 AND s.status = 'ok'
 WHERE r.rank = 1;

PRAGMA user_version = 1;
