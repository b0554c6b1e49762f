// `pnpm bench` in kptfile-model (after `build`; reads dist/): addMergeComments on the files of a
// synthetic package of about 1,000 resources (a Deployment, a Service and a ConfigMap per file,
// ~330 files), as `kdelta pkg update` runs it on the origin and upstream packages. Beside it, the
// floor the previous compose-based implementation could not go under: yaml's parseAllDocuments
// on the same files. Also run on the files once they carry the comments (the common case of a
// re-fetch), and reported: how many files took the line scanner.
import { parseAllDocuments } from 'yaml';
import { addMergeComments } from '../dist/index.js';
import { addMergeCommentsTraced } from '../dist/merge-comment.js';
import { syntheticPackage } from '../../merge-core/bench/synthetic.mjs';

const resources = Number(process.env.RESOURCES ?? 1000);
const pkg = syntheticPackage(resources);
const files = pkg.origin.map((f) => f.text);
const marked = files.map(addMergeComments);

function time(fn, minMs = 1500) {
  fn(); // warm up
  const runs = [];
  const start = performance.now();
  while (performance.now() - start < minMs || runs.length < 5) {
    const t = performance.now();
    fn();
    runs.push(performance.now() - t);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)];
}

const count = files.reduce((n, t) => n + (t.match(/^kind:/gm) ?? []).length, 0);
const scanned = files.filter((t) => addMergeCommentsTraced(t).path === 'scan').length;
const rows = [
  { files: 'origin files', ms: time(() => files.forEach(addMergeComments)) },
  { files: 'origin files: parseAllDocuments floor', ms: time(() => files.forEach((t) => parseAllDocuments(t))) },
  { files: 'files already commented', ms: time(() => marked.forEach(addMergeComments)) },
  { files: 'files already commented: parseAllDocuments floor', ms: time(() => marked.forEach((t) => parseAllDocuments(t))) },
];
console.log(
  `addMergeComments: ${files.length} files, ${count} resources, ${(files.join('').length / 1e6).toFixed(2)} MB; ${scanned} files on the line scanner`,
);
console.table(rows.map((r) => ({ files: r.files, 'median ms': r.ms.toFixed(1) })));
