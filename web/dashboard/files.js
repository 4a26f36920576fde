// The files dropped in: how they pair into sets (by name, or as a manifest says), the JSON files
// (a calibration or a manifest), and the pairing the user changes by hand.
import { analyse, rescore, scoreSet } from './analysis.js';
import { openNpz } from './npz.js';
import { hideProgress, setStatus, showError, summaryText } from './page.js';
import { render } from './render.js';
import { forget, state, worker } from './state.js';

// The size limits of mano's readers for these JSON files (native/io/json.hpp).
const JSON_LIMITS = { calibration: 256 * 2 ** 20, manifest: 64 * 2 ** 20 };

// A file pairs by its last name part: "contrast_0_logits.npy" and "contrast_0_labels.npy" are the
// set "contrast_0". Only a whole final part counts ("label_shift_a0.2_0_logits.npy" is the set
// "label_shift_a0.2_0", "jpeg3_withlabel.csv" the set "jpeg3_withlabel"), and a file with no
// such part is a set of its own name.
// An .npz's members are named `ARCHIVE.npz/MEMBER.npy` (npz.js): the archive's name names them.
const stemOf = (fileName) => fileName.replace(/\.npz\/.*$/i, '').replace(/\.(npy|npz|csv|tsv|safetensors)$/i, '');
const PAIR_PART = /[_.-](logits|labels?)$/i;
function setName(fileName) {
  const stem = stemOf(fileName);
  return stem.replace(PAIR_PART, '') || stem;
}
// the members of an .npz of logits and labels are what their names say (npz.js), whatever the archive's name
const npzRoles = new WeakMap();
const isLabelsFile = (f) => (npzRoles.has(f) ? npzRoles.get(f) === 'labels'
  : /\.(npy|safetensors)$/i.test(f.name) && /^labels?$|[_.-]labels?$/i.test(stemOf(f.name)));
const isSource = (name) => /^source/i.test(name);

const baseName = (p) => String(p).split(/[\\/]/).pop();

// A dropped JSON file: a calibration or a manifest; false when it is neither (said why).
async function readJsonFile(f) {
  const limit = Math.max(JSON_LIMITS.calibration, JSON_LIMITS.manifest);
  if (f.size > limit) {
    showError(`${f.name}: ${f.size.toLocaleString()} bytes, over the ${limit.toLocaleString()}-byte limit of mano's calibration reader`);
    return false;
  }
  let doc;
  try {
    doc = JSON.parse(await f.text());
  } catch (e) {
    showError(`${f.name}: not JSON (${e.message})`);
    return false;
  }
  if (doc?.format === 'mano-calibration') {
    state.loaded = { name: f.name, calibration: doc };
    for (const s of state.sets) s.branch = null;  // scored again with its options
    return true;
  }
  if (doc && Array.isArray(doc.sets)) {
    if (f.size > JSON_LIMITS.manifest) {
      showError(`${f.name}: ${f.size.toLocaleString()} bytes, over the ${JSON_LIMITS.manifest.toLocaleString()}-byte limit of mano's manifest reader`);
      return false;
    }
    const bad = doc.sets.findIndex((x) => !x || typeof x.name !== 'string' || !x.name || typeof x.logits !== 'string' ||
      (x.labels !== undefined && typeof x.labels !== 'string') || (x.group !== undefined && typeof x.group !== 'string'));
    if (bad >= 0) {
      showError(`${f.name}: sets[${bad}] must be {"name", "logits", "labels"?, "group"?} with text values`);
      return false;
    }
    const names = new Set();
    for (const x of doc.sets) {
      if (names.has(x.name)) {
        showError(`${f.name}: the set name "${x.name}" is used twice`);
        return false;
      }
      names.add(x.name);
    }
    state.manifest = { name: f.name, source: doc.source, sets: doc.sets };
    return true;
  }
  showError(`${f.name}: neither a calibration (mano calibrate -o, format "mano-calibration") nor a manifest ({"sets": [...]})`);
  return false;
}

// What the manifest says a file is: { set, role: 'logits' | 'labels', group } or { source: role }.
function manifestRole(fileName) {
  const m = state.manifest;
  if (!m) return null;
  if (m.source && baseName(m.source.logits) === fileName) return { source: 'logits' };
  if (m.source && baseName(m.source.labels) === fileName) return { source: 'labels' };
  for (const x of m.sets) {
    if (baseName(x.logits) === fileName) return { set: x.name, role: 'logits', group: x.group ?? '' };
    if (x.labels !== undefined && baseName(x.labels) === fileName) return { set: x.name, role: 'labels', group: x.group ?? '' };
  }
  return null;
}

// Each .npz replaced by its members (one array, or its logits and labels); one that cannot be read is said and left out.
async function withNpzMembers(files) {
  const out = [];
  for (const f of files) {
    if (!/\.npz$/i.test(f.name)) {
      out.push(f);
      continue;
    }
    try {
      const { logits, labels } = await openNpz(f);
      if (labels) {
        npzRoles.set(logits, 'logits');
        npzRoles.set(labels, 'labels');
      }
      out.push(logits, ...(labels ? [labels] : []));
    } catch (e) {
      showError(e.message);
    }
  }
  return out;
}

export async function addFiles(fileList) {
  let files = [...fileList];
  if (!files.length) return;
  setStatus('Working…', true);
  try {
    // JSON first: a manifest says how the other files pair, a calibration how to score them
    for (const f of files.filter((x) => /\.json$/i.test(x.name))) await readJsonFile(f);
    files = await withNpzMembers(files.filter((x) => !/\.json$/i.test(x.name)));
    // the manifest's files pair as it says; the others by their names
    const byManifest = files.map((f) => [f, manifestRole(f.name)]).filter(([, r]) => r);
    const listed = new Set(byManifest.map(([f]) => f));
    const unlisted = files.filter((f) => !listed.has(f));
    const labelsFiles = new Map(unlisted.filter(isLabelsFile).map((f) => [setName(f.name), f]));
    const logitsFiles = unlisted.filter((f) => !isLabelsFile(f));
    for (const [f, r] of byManifest) {
      if (r.source) continue;
      if (r.role === 'labels') labelsFiles.set(r.set, f);
    }
    // The source set first: every set is scored with it (ATC, DoC); a manifest's "source", or
    // files named source*
    const sourcePairs = logitsFiles.filter((f) => isSource(setName(f.name))).map((f) => {
      const labels = labelsFiles.get(setName(f.name));
      labelsFiles.delete(setName(f.name));
      return [f, labels];
    });
    const manifestSource = byManifest.find(([, r]) => r.source === 'logits')?.[0];
    if (manifestSource) sourcePairs.push([manifestSource, byManifest.find(([, r]) => r.source === 'labels')?.[0]]);
    for (const [f, labels] of sourcePairs) {
      if (!labels) {
        showError(`${f.name}: a source set needs its labels (${manifestSource === f ? baseName(state.manifest.source.labels) : `${setName(f.name)}_labels.npy`}, dropped with it); it was skipped`);
        continue;
      }
      try {
        const [logits, y] = [await worker.read(f), await worker.read(labels)];
        if (y.dtype !== 'int32') throw new Error(`${labels.name}: labels must be integers`);
        state.source = { logits: logits.data, labels: y.data, dtype: logits.dtype };
        for (const s of state.sets) forget(s);  // rescored with the source below
      } catch (e) {
        showError(e.message);
      }
    }
    // the labels files left (a source's are its own): the pairing table offers them
    for (const f of labelsFiles.values()) state.labelFiles.set(f.name, f);
    const setFiles = [...logitsFiles.filter((f) => !isSource(setName(f.name))).map((f) => [f, setName(f.name), '']),
      ...byManifest.filter(([, r]) => r.role === 'logits').map(([f, r]) => [f, r.set, r.group])];
    for (const [f, name, group] of setFiles) {
      const set = forget({ name, group, file: f, labels: labelsFiles.get(name) ?? state.waiting?.get(name) });
      labelsFiles.delete(name);
      state.waiting?.delete(name);
      const old = state.sets.findIndex((s) => s.name === name);
      if (old >= 0) state.sets.splice(old, 1, set);
      else state.sets.push(set);
    }
    // labels dropped later than their logits
    for (const [name, labels] of labelsFiles) {
      const set = state.sets.find((s) => s.name === name);
      if (set) {
        set.labels = labels;
        forget(set);
      } else if (state.manifest?.sets.some((x) => x.name === name)) {
        (state.waiting ??= new Map()).set(name, labels);  // its logits are still to come
      } else {
        showError(`${labels.name}: no logits file for these labels (expected a file named like ${name}_logits.npy, or a manifest ` +
          'naming both); pair it with its logits in the pairing table under Sets');
      }
    }
    await rescore();
    render();
  } finally {
    hideProgress();
    setStatus(summaryText(), false);
  }
}

// Pairs a set with other labels (or none) and scores it again; labels that do not fit its rows
// are refused and the set keeps its pairing.
export async function repair(set, labels) {
  const before = set.labels;
  setStatus(`Pairing ${set.name}…`, true);
  try {
    set.labels = labels;
    forget(set);
    try {
      await scoreSet(set, 0, 1);
    } catch (e) {
      showError(e.message);
      set.labels = before;
      forget(set);
      await scoreSet(set, 0, 1);
    }
    await analyse();
    render();
  } finally {
    hideProgress();
    setStatus(summaryText(), false);
  }
}
