import { parseAllDocuments } from 'yaml';
import { mergeFiles } from '../dist/index.js';
const n = Number(process.argv[2] ?? 40000);
const cm = (keep, edit, extra) => {
  let s = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n';
  for (let i = 0; i < n; i++) {
    if (keep(i)) s += `  key-${String(i).padStart(6, '0')}: "value ${edit(i)}"\n`;
    if (extra(i)) s += `  key-${String(i).padStart(6, '0')}-new: "added ${i}"\n`;
  }
  return s;
};
const no = () => false,
  yes = () => true;
const origin = cm(yes, (i) => `${i}`, no);
const upstream = cm(
  (i) => i % 97 !== 0,
  (i) => (i % 10 === 0 ? `${i} up` : `${i}`),
  (i) => i % 20 === 5,
);
const local = cm(
  (i) => i % 89 !== 0,
  (i) => (i % 15 === 0 ? `${i} local` : `${i}`),
  (i) => i % 50 === 7,
);
console.log('bytes', local.length);
let t = performance.now();
for (const x of [origin, upstream, local]) parseAllDocuments(x, { version: '1.1', uniqueKeys: false });
console.log('parse 3 (uniqueKeys false)', (performance.now() - t).toFixed(0));
t = performance.now();
const r = mergeFiles({
  origin: [{ path: 'cm.yaml', text: origin }],
  upstream: [{ path: 'cm.yaml', text: upstream }],
  local: [{ path: 'cm.yaml', text: local }],
});
console.log('merge', (performance.now() - t).toFixed(0), 'conflicts', r.conflicts.length, 'out', r.files[0].text.length);
