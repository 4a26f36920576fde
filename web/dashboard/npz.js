// A dropped .npz (numpy.savez, stored, or savez_compressed, deflated; ZIP64 too) opened into the
// .npy members the package reads, chosen as mano chooses them (docs/cli.md, input files): its one
// array whatever its name, otherwise `logits` and `labels`. Nothing is uploaded: the members are
// sliced (stored) or inflated (deflated, DecompressionStream) in the page.

const MAX_MEMBERS = 65536;  // mano's limit (docs/cli.md)

const u16 = (v, at) => v.getUint16(at, true);
const u32 = (v, at) => v.getUint32(at, true);
const u64 = (v, at) => Number(v.getBigUint64(at, true));

async function bytes(file, from, to) {
  return new DataView(await file.slice(from, to).arrayBuffer());
}

// The central directory's place: { count, offset } from the end record (ZIP64's when it says so).
async function directory(file) {
  const tailStart = Math.max(0, file.size - 22 - 65535);
  const tail = await bytes(file, tailStart, file.size);
  let end = -1;
  for (let at = tail.byteLength - 22; at >= 0; at--) if (u32(tail, at) === 0x06054b50) { end = at; break; }
  if (end < 0) throw new Error('not a ZIP archive (no end of central directory): is it an .npz numpy.savez wrote?');
  let count = u16(tail, end + 10), offset = u32(tail, end + 16);
  if ((count === 0xffff || offset === 0xffffffff) && end >= 20 && u32(tail, end - 20) === 0x07064b50) {
    const record = await bytes(file, u64(tail, end - 20 + 8), u64(tail, end - 20 + 8) + 56);
    if (u32(record, 0) !== 0x06064b50) throw new Error('a damaged ZIP64 end record');
    count = u64(record, 32);
    offset = u64(record, 48);
  }
  if (count > MAX_MEMBERS) throw new Error(`${count} members, over mano's limit of ${MAX_MEMBERS}`);
  return { count, offset };
}

// The members: [{ name, method, compressed, size, local }] (ZIP64 sizes and offsets read from their extra field).
async function members(file) {
  const { count, offset } = await directory(file);
  const list = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    const head = await bytes(file, at, Math.min(file.size, at + 46));
    if (head.byteLength < 46 || u32(head, 0) !== 0x02014b50) throw new Error(`member ${i}: a damaged central directory`);
    const [nameLength, extraLength, commentLength] = [u16(head, 28), u16(head, 30), u16(head, 32)];
    const rest = await bytes(file, at + 46, at + 46 + nameLength + extraLength);
    const name = new TextDecoder().decode(new Uint8Array(rest.buffer, 0, nameLength));
    const entry = { name, method: u16(head, 10), compressed: u32(head, 20), size: u32(head, 24), local: u32(head, 42) };
    for (let e = nameLength; e + 4 <= nameLength + extraLength;) {
      const [id, length] = [u16(rest, e), u16(rest, e + 2)];
      if (id === 0x0001) {
        let p = e + 4;
        for (const key of ['size', 'compressed', 'local']) if (entry[key] === 0xffffffff) { entry[key] = u64(rest, p); p += 8; }
      }
      e += 4 + length;
    }
    list.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return list;
}

// A member's bytes as a Blob: sliced when stored, inflated when deflated (never past its stated size).
async function memberBlob(file, m) {
  const local = await bytes(file, m.local, m.local + 30);
  if (u32(local, 0) !== 0x04034b50) throw new Error(`${m.name}: a damaged local header`);
  const start = m.local + 30 + u16(local, 26) + u16(local, 28);
  const raw = file.slice(start, start + m.compressed);
  if (m.method === 0) return raw;
  if (m.method !== 8) throw new Error(`${m.name}: compression method ${m.method} (mano reads stored or deflated members)`);
  const parts = [];
  let total = 0;
  const reader = raw.stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > m.size) {
      await reader.cancel();
      throw new Error(`${m.name}: inflates past its stated ${m.size.toLocaleString()} bytes`);
    }
    parts.push(value);
  }
  return new Blob(parts);
}

// An .npz File -> { logits: File, labels?: File }, each named `ARCHIVE.npz/MEMBER.npy` for its messages.
export async function openNpz(file) {
  try {
    const list = (await members(file)).filter((m) => !m.name.endsWith('/'));
    const byName = new Map(list.map((m) => [m.name.replace(/\.npy$/, ''), m]));
    if (byName.size !== list.length) throw new Error('two members of one array name');
    const pick = list.length === 1 ? { logits: list[0] } : { logits: byName.get('logits'), labels: byName.get('labels') };
    if (!pick.logits) {
      throw new Error(`members ${[...byName.keys()].join(', ')}: name the logits array "logits" (and its labels "labels"), ` +
        'as mano reads an .npz of several arrays');
    }
    const out = {};
    for (const [role, m] of Object.entries(pick)) {
      if (m) out[role] = new File([await memberBlob(file, m)], `${file.name}/${m.name.endsWith('.npy') ? m.name : `${m.name}.npy`}`);
    }
    return out;
  } catch (e) {
    throw new Error(`${file.name}: ${e.message}`);
  }
}
