-- The tables and indexes of a mano monitoring history, schema version 2 (docs/monitor.md explains
-- each column; history_v1.sql is version 1's, which both readers still accept). mano's history
-- code (native/host/history.cpp, built in) and the dashboard (web/dashboard/history.js) both hold
-- a file to exactly these entries: a history with anything
-- else in its schema (a view, a trigger, another table or index) is refused before it is read.
-- The estimate columns of points repeat, for queries, what its prediction column's JSON holds
-- exactly (what mano predict --json gives for the point).
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE calibrations (sha256 TEXT PRIMARY KEY, calibration TEXT NOT NULL);
CREATE TABLE adds (
  id INTEGER PRIMARY KEY,
  time TEXT NOT NULL,
  written_at TEXT NOT NULL,
  mano_version TEXT NOT NULL,
  calibration_sha256 TEXT NOT NULL REFERENCES calibrations(sha256)
);
CREATE TABLE points (
  id INTEGER PRIMARY KEY,
  add_id INTEGER NOT NULL REFERENCES adds(id),
  time TEXT NOT NULL,
  name TEXT NOT NULL,
  file TEXT NOT NULL,
  chunk INTEGER,
  first_row INTEGER,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  level REAL NOT NULL,
  method TEXT,
  accuracy REAL,
  lower REAL,
  upper REAL,
  regime TEXT,
  shift_distance REAL,
  shift_range REAL,
  shift_outside INTEGER,
  calibration_sha256 TEXT NOT NULL REFERENCES calibrations(sha256),
  prediction TEXT NOT NULL,
  state TEXT NOT NULL
);
CREATE INDEX points_by_time ON points (time, id);
CREATE TABLE estimates (
  point_id INTEGER NOT NULL REFERENCES points(id),
  method TEXT NOT NULL,
  score REAL NOT NULL,
  se REAL,
  accuracy REAL NOT NULL,
  lower REAL NOT NULL,
  upper REAL NOT NULL,
  extrapolated INTEGER NOT NULL,
  PRIMARY KEY (point_id, method)
);
