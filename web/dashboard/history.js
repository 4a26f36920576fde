// A monitoring history (`mano monitor add`, docs/monitor.md) opened in the page: the SQLite file
// is read here with sql.js (SQLite compiled to WebAssembly, bundled with the page; nothing is
// uploaded), and the timeline, the alert line and the too-small warning are the core's monitoring
// rules run in the Worker (the package's monitor(), src/mano/workflow/monitoring.hpp), as `mano monitor
// report` runs them: the reference period is the first add's points unless a count is given, and
// a point scored with another calibration than the reference's is marked, not compared.
import initSqlJs from 'sql.js';
import sqlWasmUrl from 'sql.js/dist/sql-wasm-browser.wasm?url';

// mano's own statements, and the limits and shapes of what it writes (history_limits.json, the
// *.schema.json shapes it names), the ones native/host/history.cpp and history_limits.cpp hold a
// file to as well
import schemaSql from '../../src/mano/schema/history.sql?raw';
import schemaV1Sql from '../../src/mano/schema/history_v1.sql?raw';
import LIMITS from '../../src/mano/schema/history_limits.json';

import { timelineChart } from './charts.js';
import { $, el, interval, pct, showError } from './page.js';
import { state, worker } from './state.js';

const SCHEMA_VERSION = 2;  // native/host/history.hpp, schema_version (version 1's files read too)
const FORMAT = 'mano history';

let sqlite = null;  // sql.js, loaded on the first history
let opened = null;  // { name, points, calibrations }

// An axis label: the date, and the time of day when it is not midnight (UTC).
const shortTime = (t) => (t.endsWith('T00:00:00Z') ? t.slice(0, 10) : `${t.slice(0, 16).replace('T', ' ')}Z`);

export const isHistoryFile = (f) => /\.(db|sqlite3?)$/i.test(f.name);

// The schema's entries as SQLite keeps them, "type name table statement" in one order.
const schemaOf = (db) => db.exec("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")[0]
  ?.values.map((row) => row.join('\u0000')) ?? [];
const ownSchemas = {};  // what mano's statements give, by schema version, from a database in memory

const UTC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const isAccuracy = (x) => typeof x === 'number' && x >= 0 && x <= 1;

// Every $def of the shape files, one namespace (as native/host/history_limits.cpp reads them).
const DEFS = Object.assign({}, ...Object.values(import.meta.glob('../../src/mano/schema/*.schema.json', { eager: true, import: 'default' }))
  .map((file) => file.$defs));

// The sizes of `table`'s values, the columns history_limits.json lists, each from its row's header
// (octet_length) before any is read; the first over its limit is the error, "ROW: what".
function checkSizes(db, table, rowName) {
  const limits = Object.entries(LIMITS.columns[table]);
  const st = db.prepare(`SELECT rowid, ${limits.map(([c]) => `typeof(${c}), octet_length(${c})`).join(', ')} FROM ${table} ORDER BY rowid`);
  try {
    while (st.step()) {
      const [rowid, ...cells] = st.get();
      limits.forEach(([column, { max_bytes: max, why }], i) => {
        const [type, bytes] = [cells[2 * i], cells[2 * i + 1]];
        if (type !== 'text' && type !== 'blob') return;
        if (max === 0) throw new Damage(`${rowName}${rowid}`, `its ${column} is text or a blob (${bytes} bytes), where mano writes ${why}`);
        if (bytes > max) throw new Damage(`${rowName}${rowid}`, `its ${column} is ${bytes} bytes, over the ${max}-byte limit of ${table}.${column}: ${why}`);
      });
    }
  } finally {
    st.free();
  }
}

class Damage extends Error {
  constructor(row, what) {
    super(`${row}: ${what}`);
  }
}

const KEYWORDS = new Set(['$ref', 'type', 'enum', 'properties', 'required', 'additionalProperties', 'propertyNames', 'items', 'prefixItems',
  'minItems', 'maxItems', 'minimum', 'pattern', 'description', 'title', 'x-ts', 'x-py']);
const shown = (key) => (key.length > 64 ? `${key.slice(0, 64)}...` : key);
const TYPES = {
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v), array: Array.isArray, string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean', number: Number.isFinite, integer: Number.isInteger, null: (v) => v === null,
};

// What is wrong with `v` at `at` (its keys and indices) against the shape `s`, as
// native/host/history_limits.cpp says it; null when nothing. `methods`: the method table's names.
function shapeProblem(v, s, at, methods) {
  const where = at.map((step) => (typeof step === 'number' ? `[${step}]` : `.${shown(step)}`)).join('').replace(/^\./, '');
  const here = at.length ? `its prediction's ${where}` : 'its prediction';
  for (const k of Object.keys(s)) if (!KEYWORDS.has(k)) throw new Error(`src/mano/schema: a keyword "${k}" that the page does not know`);
  if (s.$ref) {
    const name = s.$ref.slice('#/$defs/'.length);
    const inner = shapeProblem(v, DEFS[name], at, methods);
    if (inner) return inner;
    if (name === 'MethodName' && !methods.includes(v)) return `${here} is not a method of mano's table`;
  }
  if (s.enum && !s.enum.some((e) => e === v)) return `${here} is not one of ${JSON.stringify(s.enum)}`;
  if (s.type && !TYPES[s.type](v)) return `${here} is not of type ${s.type}`;
  if (s.minimum !== undefined && typeof v === 'number' && v < s.minimum) return `${here} is below ${s.minimum}`;
  if (s.pattern && typeof v === 'string' && !new RegExp(s.pattern).test(v)) return `${here} is not a name mano writes`;
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems) return `${here} has fewer than ${s.minItems} items`;
    if (s.maxItems !== undefined && v.length > s.maxItems) return `${here} has more than ${s.maxItems} items`;
    for (const [i, item] of v.entries()) {
      const sub = s.prefixItems?.[i] ?? s.items;
      const p = sub && shapeProblem(item, sub, [...at, i], methods);
      if (p) return p;
    }
  }
  if (!TYPES.object(v)) return null;
  for (const key of s.required ?? []) if (!Object.hasOwn(v, key)) return `${here} lacks "${key}"`;
  for (const [key, value] of Object.entries(v)) {
    const sub = (s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined) ??
      (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if ((s.propertyNames && shapeProblem(key, s.propertyNames, [...at, key], methods)) || (!sub && s.additionalProperties === false))
      return `its prediction holds the key "${shown(key)}"${at.length ? ` in ${where}` : ''}, which mano does not write`;
    const p = sub && shapeProblem(value, sub, [...at, key], methods);
    if (p) return p;
  }
  return null;
}

// The Prediction shape less the keys an add never writes (history_limits.json).
const PREDICTION = (() => {
  const shape = structuredClone(DEFS[LIMITS.prediction.shape]);
  for (const key of LIMITS.prediction.not_written) delete shape.properties[key];
  shape.required = shape.required.filter((key) => !LIMITS.prediction.not_written.includes(key));
  return shape;
})();

// What the page reads of the reference's calibration, as mano monitor report reads it: its recommended
// method (one of the table) and that method's link and slope, by SQLite's JSON functions, so that no
// object of the whole calibration is made; { methods: {} } when the text is not JSON.
function recommendedFit(db, hash, methods) {
  const st = db.prepare("SELECT r, CASE WHEN r GLOB '[a-z]*' AND r NOT GLOB '*[^a-z0-9_]*' THEN json_extract(calibration, " +
    "'$.methods.' || r || '.link', '$.methods.' || r || '.slope') END FROM (SELECT calibration, json_extract(calibration, " +
    "'$.recommended') AS r FROM calibrations WHERE sha256 = ?)", [hash]);
  try {
    const [recommended, fit] = st.step() ? st.get() : [];
    if (typeof recommended !== 'string' || !methods.includes(recommended) || typeof fit !== 'string') return { methods: {} };
    const [link, slope] = JSON.parse(fit);
    return typeof slope === 'number' ? { recommended, methods: { [recommended]: { link: link ?? undefined, slope } } } : { methods: {} };
  } catch {
    return { methods: {} };
  } finally {
    st.free();
  }
}

// A point as mano writes it, as far as the page reads it; else the message that says what is damaged.
function damage(time, prediction) {
  if (typeof time !== 'string' || !UTC_TIME.test(time) || Number(time.slice(0, 4)) < 1) return 'its time is not YYYY-MM-DDTHH:MM:SSZ';
  const e = prediction?.estimate;
  if (prediction === null || typeof prediction !== 'object') return 'its prediction is not a JSON object';
  if (e === undefined || e === null) return null;
  if (typeof e.method !== 'string') return 'its estimate names no method';
  if (!isAccuracy(e.accuracy)) return 'its estimated accuracy is not a number in [0, 1]';
  if (!Array.isArray(e.interval) || e.interval.length !== 2 || !e.interval.every(isAccuracy) || e.interval[0] > e.interval[1])
    return "its estimate's interval is not two numbers in [0, 1], lower first";
  return null;
}

// The points of a history file's bytes, in time order: { id, add, time, name, n, calibration, prediction }.
// A history is untrusted input (docs/monitor.md): nothing but its schema is read until the schema
// is exactly mano's (no view, no trigger), and schema functions are off.
function readHistory(name, bytes, methods) {
  if (bytes.length < 100 || new TextDecoder().decode(bytes.subarray(0, 15)) !== 'SQLite format 3')
    throw new Error(`${name}: not a mano history (not an SQLite database)`);
  // The history is in WAL mode, which needs shared memory that an in-page copy has no use for:
  // its header's read and write versions (bytes 18 and 19) say rollback journal instead. A
  // writer's last points still in NAME-wal (an add running now) come once it has ended.
  const copy = bytes.slice();
  copy[18] = 1;
  copy[19] = 1;
  let db;
  try {
    db = new sqlite.Database(copy);
    const all = (sql) => {
      const out = [];
      const st = db.prepare(sql);
      while (st.step()) out.push(st.getAsObject());
      st.free();
      return out;
    };
    db.run('PRAGMA trusted_schema = OFF');
    const version = all('PRAGMA user_version')[0].user_version;
    if (version > SCHEMA_VERSION) throw new Error(`${name}: a mano history of schema version ${version}, newer than this page reads (${SCHEMA_VERSION})`);
    const found = schemaOf(db);
    const notHistory = `${name}: an SQLite database that is not a mano history (no meta table naming it "${FORMAT}")`;
    if (version < 1 || !found.some((e) => e.startsWith('table\u0000meta\u0000'))) throw new Error(notHistory);
    if (!ownSchemas[version]) {
      const own = new sqlite.Database();
      own.run(version === 1 ? schemaV1Sql : schemaSql);
      ownSchemas[version] = schemaOf(own);
      own.close();
    }
    const ownSchema = ownSchemas[version];
    const foreign = found.find((e) => !ownSchema.includes(e));
    if (foreign) {
      const [type, entry] = foreign.split('\u0000');
      const known = ownSchema.some((e) => e.startsWith(`${type}\u0000${entry}\u0000`));
      throw new Error(`${name}: refused: its schema has ${known ? 'another definition of the' : 'a'} ${type} "${entry}" that mano ` +
        "does not write (a history may hold mano's tables and indexes only, so that nothing in it runs)");
    }
    if (found.length !== ownSchema.length) throw new Error(`${name}: the history is damaged (its schema lacks some of mano's tables or indexes)`);
    // every value read within its column's limit before any is (history_limits.json)
    checkSizes(db, 'meta', 'meta row ');
    if (all("SELECT value FROM meta WHERE key = 'format'")[0]?.value !== FORMAT) throw new Error(notHistory);
    checkSizes(db, 'calibrations', 'calibration row ');
    checkSizes(db, 'points', 'point ');
    const points = all('SELECT id, add_id, time, name, n, calibration_sha256, prediction FROM points ORDER BY time, id').map((r) => {
      let prediction = null;
      try {
        prediction = JSON.parse(r.prediction);
      } catch {
        // reported below as damage
      }
      const why = damage(r.time, prediction) ?? (Number.isSafeInteger(r.n) && r.n >= 0 ? null : 'its row count is not a whole number') ??
        shapeProblem(prediction, PREDICTION, [], methods);
      if (why) throw new Damage(`point ${r.id}`, why);
      return { id: r.id, add: r.add_id, time: r.time, name: r.name, n: r.n, calibration: r.calibration_sha256, prediction };
    });
    return { name, points, calibrations: new Map(points.length ? [[points[0].calibration, recommendedFit(db, points[0].calibration, methods)]] : []) };
  } catch (e) {
    if (e instanceof Damage) throw new Error(`${name}: the history is damaged (${e.message}); restore it from a backup or start a new one`);
    throw new Error(e.message.startsWith(`${name}: `) ? e.message : `${name}: not a readable mano history (${e.message})`);
  } finally {
    db?.close();
  }
}

export async function openHistory(file) {
  try {
    sqlite ??= await initSqlJs({ locateFile: () => sqlWasmUrl });
    const methods = (await worker.methods()).map((m) => m.name);  // the method table, a point's methods' names
    opened = readHistory(file.name, new Uint8Array(await file.arrayBuffer()), methods);
    if (!opened.points.length) throw new Error(`${file.name}: the history has no points yet`);
    state.history = { name: file.name, points: opened.points.length };
    $('history-panel').hidden = false;
    await drawHistory();
  } catch (e) {
    showError(e.message);
  }
}

// The reference period: the count given, else the first add's points (as mano monitor report).
function referenceCount(points) {
  const given = Math.floor(Number($('history-reference').value)) || 0;
  if (given > 0) return { count: given, chosenBy: `the first ${given} points` };
  let count = 0;
  while (count < points.length && points[count].add === points[0].add) count += 1;
  return { count, chosenBy: "the first add's points" };
}

export async function drawHistory() {
  if (!opened) return;
  const { name, points, calibrations } = opened;
  const { count, chosenBy } = referenceCount(points);
  const hash = points[0].calibration;
  if (points.slice(0, count).some((p) => p.calibration !== hash)) {
    showError(`${name}: the reference period (${chosenBy}) mixes calibrations; give a reference within one`);
    return;
  }
  // the too-small rule takes each point's slope from its prediction; for points stored before
  // predictions carried one, the recommended method's line slope where it is the same at every
  // score (the identity link), as mano monitor report
  const cal = calibrations.get(hash);
  const noiseMethod = cal?.recommended;
  const fit = noiseMethod ? cal.methods?.[noiseMethod] : undefined;
  const slope = fit && fit.link !== 'probit' ? fit.slope : undefined;
  const changed = points.map((p) => p.calibration !== hash);
  const corePoints = points.map((p, i) => ({
    estimate: changed[i] ? null : p.prediction.estimate?.accuracy ?? null,
    // as mano monitor report: a score's se only where the point has an estimate
    se: changed[i] || p.prediction.estimate === undefined ? null : p.prediction.methods?.[noiseMethod]?.se ?? null,
    slope: changed[i] ? null : p.prediction.methods?.[noiseMethod]?.slope ?? null,
    rows: p.n,
  }));
  let assessment;
  try {
    assessment = await worker.monitor(corePoints, slope === undefined ? { reference: count } : { reference: count, slope });
  } catch (e) {
    showError(`${name}: ${e.message} (reference: ${chosenBy})`);
    return;
  }
  const line = assessment.threshold;
  const alerts = new Set(assessment.alerts);
  const status = (i) => (i < count ? 'reference' : changed[i] ? 'other calibration: not compared'
    : corePoints[i].estimate === null ? 'no estimate' : alerts.has(i) ? 'ALERT' : 'ok');
  const latest = points.length - 1;
  $('history-note').textContent = assessment.waiting
    // as mano monitor report: every point is in the reference period, none compared yet
    ? `${name}: ${points.length} point${points.length === 1 ? '' : 's'}, every one in the reference (${chosenBy}); not enough ` +
      'points yet: the points added after it are compared with its alert line' +
      (line.value === undefined ? ', once it has 2 estimates.' : ` (${pct(line.value)}).`)
    : `${name}: ${points.length} points from ${points[0].time} to ${points[latest].time}; reference: ` +
    `${chosenBy} (${count} points), mean ${pct(line.mean)}, standard deviation ${pct(line.sd)}; alert below ${pct(line.value)} ` +
    '(mean − 3 sd).';
  const items = assessment.waiting ? [] : [{ alert: alerts.size > 0, text: alerts.size ? `${alerts.size} point${alerts.size === 1 ? '' : 's'} below ${pct(line.value)}: ` +
    [...alerts].map((i) => `${points[i].name} at ${points[i].time} (${pct(corePoints[i].estimate)})`).join(', ')
    : `no point below ${pct(line.value)}` }];
  items.push({ alert: alerts.has(latest), text: `latest point: ${status(latest)}` });
  if (changed.some(Boolean)) items.push({ alert: false, text: `${changed.filter(Boolean).length} point(s) scored with another calibration: marked, not compared` });
  if (assessment.noise) {
    const n = assessment.noise;
    items.push({ alert: false, text: `⚠ points of ${n.rows.toLocaleString()} rows are small for ${noiseMethod}: the score's sampling noise alone ` +
      `moves the estimate by ±${pct(n.half_width)} (90%); about ${n.rows_needed.toLocaleString()} rows per point bring it to ±${pct(n.limit)}` });
  }
  // the core's numbers, for a test or a script to read exactly
  Object.assign($('history-note').dataset, { threshold: String(line.value ?? ''), reference: String(count), alerts: JSON.stringify([...alerts]) });
  $('history-alerts').replaceChildren(...items.map((a) => el('li', { className: a.alert ? 'alert' : '', textContent: a.text })));
  $('history-rows').replaceChildren(...points.map((p, i) => {
    const e = p.prediction.estimate;
    return el('tr', { dataset: { testid: 'history-row', index: String(i), status: status(i) } },
      ...[p.time, p.name, p.n.toLocaleString(), e?.method ?? '–', e ? pct(e.accuracy) : '–', e ? interval(e) : '–', status(i)]
        .map((text) => el('td', { textContent: text })));
  }));
  const chartPoints = points.map((p, i) => ({
    label: shortTime(p.time), first: i, rows: p.n, y: corePoints[i].estimate,
    lo: changed[i] ? null : p.prediction.estimate?.interval[0] ?? null, hi: changed[i] ? null : p.prediction.estimate?.interval[1] ?? null,
  }));
  timelineChart($('history-timeline'), {
    points: chartPoints, threshold: line.value ?? null, reference: count, withBand: true, unit: 'set',
    yLabel: 'estimated accuracy', alt: `${$('history-note').textContent} ${items.map((a) => a.text).join('. ')}`,
  });
}
