-- The tables and indexes of a mano monitoring history of schema version 1, as mano wrote them before
-- version 2 (history.sql) dropped points.fallback, a column nothing read. Frozen: mano
-- (native/host/history.cpp) and the dashboard (web/dashboard/history.js) still read these files,
-- and mano adds to them (leaving fallback NULL), holding them to exactly these entries.
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
  fallback INTEGER,
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
