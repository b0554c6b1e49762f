/**
 * The package-level merge: the resources of three versions of a package, matched by identity
 * and handled by seed 001's resource rules, written back in the local file layout.
 */
import { isMap, type YAMLMap } from 'yaml';
import { formatConflict, formatDecision, MergeInputError, type Conflict, type Decision, type Side } from '../errors.js';
import { holdsPinnedPair, mayHoldPin } from '../collate/pin.js';
import { printMergedDocument, withFinalLineBreak } from '../emit/print.js';
import { createEngine, type MergeOptions } from '../options.js';
import { isCustomResourceDefinition, layerSchemas, schemaRegistryFromCrds } from '../schema/index.js';
import { toPlain, type YamlNode } from '../yaml/nodes.js';
import { parseStream, type ParsedTexts, type SourceDocument, type SourceFileDocuments } from '../yaml/parse.js';
import { scanEachDocument } from '../yaml/scan.js';
import {
  formatIdentity,
  type IdentifiedDocument,
  identifyScanned,
  identityKey,
  identityOf,
  type ResourceIdentity,
  type ScannedResource,
} from './identity.js';

/** A file of a package: its path relative to the package root, and its text. */
export interface SourceFile {
  readonly path: string;
  readonly text: string;
}

export interface MergeFilesInput {
  readonly origin: readonly SourceFile[];
  readonly upstream: readonly SourceFile[];
  readonly local: readonly SourceFile[];
  /**
   * Where the merge parses, for a caller that reads the same texts after it (what upstream
   * changed): the documents it parses stay there. Absent: each is let go once merged.
   */
  readonly parsed?: ParsedTexts | undefined;
  /**
   * Texts whose documents a caller already identified while scanning them (kptfile-model's merge
   * comments do, see `identifyScanned`), by text: the merge reads them from here, not again.
   */
  readonly identified?: ReadonlyMap<string, readonly IdentifiedDocument[]> | undefined;
}

export type ResourceAction =
  /** Added upstream, added locally. */
  | 'added'
  /** Deleted upstream and unchanged locally: removed. */
  | 'deleted'
  /** In upstream and local: merged (see `changed`). */
  | 'merged'
  /** Only local has it, or upstream deleted it after local changed it: kept as it is. */
  | 'kept'
  /** Deleted locally (upstream still has it) or on both sides: stays deleted. */
  | 'skipped';

export interface ResourceReport {
  readonly resource: string;
  readonly identity: ResourceIdentity | undefined;
  readonly action: ResourceAction;
  /** Where the resource is (or was) in the local package. */
  readonly file: string;
  readonly changed: boolean;
}

export interface MergeFilesResult {
  /** Every local file after the merge. A local path missing here was deleted. */
  readonly files: readonly SourceFile[];
  /** Paths of local files removed because every resource in them was deleted. */
  readonly deleted: readonly string[];
  readonly report: readonly ResourceReport[];
  readonly conflicts: readonly Conflict[];
  /** Fields kept as local has them because local pinned them (`# kdelta:local`) where upstream changed them. */
  readonly decisions: readonly Decision[];
}

/** A document of an input file: its place and exact text, parsed or not. */
interface DocumentEntry {
  readonly index: number;
  readonly text: string;
  readonly empty: boolean;
}

interface InputFile {
  readonly file: string;
  readonly text: string;
  readonly documents: readonly DocumentEntry[];
}

/** A resource of one side. Its YAML nodes are parsed when the merge first needs them. */
interface Located {
  readonly side: Side;
  readonly file: InputFile;
  readonly entry: DocumentEntry;
  readonly identity: ResourceIdentity | undefined;
  readonly kind: string | undefined;
  readonly document: SourceDocument;
  readonly map: YAMLMap;
  /** Lets go of the parsed nodes of a resource the merge is done with. */
  release(): void;
}

/** The scan read a document differently from the parse: the merge starts again without scanning. */
class ScanMismatch extends Error {}

/** Where the merge records each document it parses (`file#index`), for tests to see what it spared. */
type Trace = string[] | undefined;

/** How the merge parses a text: `parseStream`, or a caller's {@link ParsedTexts}. */
type ParseText = (text: string, file: string, side: Side) => SourceFileDocuments;

/** A resource parsed when its file was read: the file whole, or a document the scan declined, alone. */
function parsedResource(side: Side, file: InputFile, document: SourceDocument, map: YAMLMap): Located {
  const kind = map.get('kind');
  return {
    side,
    file,
    entry: document,
    identity: identityOf(map),
    kind: typeof kind === 'string' ? kind : undefined,
    document,
    map,
    release() {},
  };
}

/**
 * A resource read by the scan. Its document is parsed on its own when needed: a document's text
 * parses the same alone as in its stream, and the scan checked it would parse.
 */
function scannedResource(
  side: Side,
  file: InputFile,
  entry: DocumentEntry,
  scanned: ScannedResource,
  trace: Trace,
  parseText: ParseText,
): Located {
  let document: SourceDocument | undefined;
  const parse = (): SourceDocument => {
    if (document) return document;
    trace?.push(`${file.file}#${entry.index}`);
    let docs: readonly SourceDocument[];
    try {
      docs = parseText(entry.text, file.file, side).documents;
    } catch (error) {
      if (error instanceof MergeInputError) throw new ScanMismatch(error.message);
      throw error;
    }
    const only = docs.length === 1 ? docs[0]! : undefined;
    const contents = only?.doc.contents;
    if (!only || only.empty || !isMap(contents) || !sameIdentity(identityOf(contents), scanned.identity)) {
      throw new ScanMismatch(`${file.file} document ${entry.index}`);
    }
    document = { ...only, index: entry.index };
    return document;
  };
  return {
    side,
    file,
    entry,
    identity: scanned.identity,
    kind: scanned.kind,
    get document() {
      return parse();
    },
    get map() {
      return parse().doc.contents as YAMLMap;
    },
    release() {
      document = undefined;
    },
  };
}

function sameIdentity(a: ResourceIdentity | undefined, b: ResourceIdentity | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && identityKey(a) === identityKey(b));
}

type Tuple = { key: string; origin?: Located; upstream?: Located; local?: Located };

/** Annotations written by tools while reading a package; they never make two resources differ. */
const bookkeepingAnnotations = [
  'config.kubernetes.io/merge-source',
  'config.kubernetes.io/path',
  'config.kubernetes.io/index',
  'internal.config.kubernetes.io/path',
  'internal.config.kubernetes.io/index',
  'internal.config.kubernetes.io/annotations-migration-resource-id',
  'internal.config.kubernetes.io/id',
  'cnrm.cloud.google.com/blueprint',
];

export function mergeFiles(input: MergeFilesInput, options: MergeOptions = {}): MergeFilesResult {
  return mergeFilesTraced(input, options, undefined);
}

/**
 * `mergeFiles`, recording in `trace` each document it parsed (`file#index`; one read for several
 * sides may be listed more than once). Not exported from the package: tests use it to see which
 * documents were spared.
 */
export function mergeFilesTraced(input: MergeFilesInput, options: MergeOptions, trace: string[] | undefined): MergeFilesResult {
  try {
    return mergeInputs(input, options, true, trace);
  } catch (error) {
    // Never expected (the scanner declines what it does not model): correct all the same.
    if (error instanceof ScanMismatch) {
      trace?.splice(0);
      return mergeInputs(input, options, false, trace);
    }
    throw error;
  }
}

function mergeInputs(input: MergeFilesInput, options: MergeOptions, scan: boolean, trace: Trace): MergeFilesResult {
  // Most files of a package are the same in two or three versions: each distinct file is read
  // once. Files are split into documents by the scanner and their resources identified without a
  // parse; a document is parsed only when the merge needs its nodes, which for an update is the
  // few resources upstream changed. A document the scanner declines is parsed alone; a file
  // whose documents it cannot even delimit is parsed whole, once.
  const readFiles = new Map<string, { file: InputFile; resources: (s: Side) => Located[] }>();
  const parseText: ParseText = input.parsed ? (text, file, side) => input.parsed!.stream(text, file, side) : parseStream;
  const read = (f: SourceFile, side: Side) => {
    const key = `${f.path}\u0000${f.text}`;
    let r = readFiles.get(key);
    if (!r) {
      r = (scan && scanFile(f, side, trace, parseText, input.identified?.get(f.text))) || parseFile(f, side, trace, parseText);
      readFiles.set(key, r);
    }
    return r;
  };
  const sides = {
    origin: input.origin.map((f) => read(f, 'origin')),
    upstream: input.upstream.map((f) => read(f, 'upstream')),
    local: input.local.map((f) => read(f, 'local')),
  };
  const located = {
    origin: locate('origin', sides.origin),
    upstream: locate('upstream', sides.upstream),
    local: locate('local', sides.local),
  };

  // CRDs in any of the three versions teach the merge their kinds' list types; one that describes
  // no schema is merged like any resource and teaches nothing.
  const crds = [...located.local, ...located.upstream, ...located.origin]
    .filter((r) => r.identity?.kind === 'CustomResourceDefinition' || r.kind === 'CustomResourceDefinition')
    .map((r) => toPlain(r.map))
    .filter(isCustomResourceDefinition);
  const schemas = crds.length > 0 ? layerSchemas(options.schemas, schemaRegistryFromCrds(crds, { skipUnreadable: true })) : options.schemas;
  const engine = createEngine({ ...options, schemas });

  const tuples = collateResources(located);
  const report: ResourceReport[] = [];
  const conflicts: Conflict[] = [];
  const decisions: Decision[] = [];
  /** New text for local documents: a string, or null for a deleted document. */
  const replaced = new Map<DocumentEntry, string | null>();
  /** Documents to add, by the upstream file they go to: resources upstream added or moved there. */
  const additions = new Map<string, Addition[]>();
  const add = (file: string, addition: Addition) => {
    const list = additions.get(file) ?? [];
    list.push(addition);
    additions.set(file, list);
  };

  for (const t of tuples) {
    const { origin, upstream, local } = t;
    const shown = describe(t);
    if (!origin && !upstream && local) {
      // Seed 001: "A resource only in local will be kept without changes."
      report.push({ resource: shown, identity: local.identity, action: 'kept', file: local.file.file, changed: false });
    } else if (!origin && upstream && !local) {
      // Seed 001: "A resource missing from origin and added in upstream will be added to local."
      add(upstream.file.file, { upstream, text: upstream.entry.text, moved: false });
      report.push({ resource: shown, identity: upstream.identity, action: 'added', file: upstream.file.file, changed: true });
    } else if (!upstream && !local) {
      report.push({
        resource: shown,
        identity: (origin ?? upstream)?.identity,
        action: 'skipped',
        file: origin!.file.file,
        changed: false,
      });
    } else if (origin && !upstream && local) {
      const pinned = mayHoldPin(local.entry.text) && holdsPinnedPair(local.map);
      if (pinned) {
        // A resource holding a pinned field stays: the pin keeps local's value whatever upstream does.
        report.push({ resource: shown, identity: local.identity, action: 'kept', file: local.file.file, changed: false });
        decisions.push({
          resource: shown,
          file: local.file.file,
          path: '.',
          rule: 'pinned-local',
          values: { origin: toPlain(origin.map), upstream: undefined, local: toPlain(local.map) },
          message: "upstream deleted it; it holds a pinned field (# kdelta:local), so local's copy is kept",
        });
      } else if (origin.entry.text === local.entry.text || sameResource(origin.map, local.map)) {
        // Seed 001: "A resource present in origin and deleted from upstream will be deleted from local."
        replaced.set(local.entry, null);
        report.push({ resource: shown, identity: local.identity, action: 'deleted', file: local.file.file, changed: true });
      } else {
        // Deleted upstream but edited locally: nothing is lost; the resource stays and is reported.
        report.push({ resource: shown, identity: local.identity, action: 'kept', file: local.file.file, changed: false });
        conflicts.push({
          resource: shown,
          file: local.file.file,
          path: '.',
          values: { origin: toPlain(origin.map), upstream: undefined, local: toPlain(local.map) },
          rule: 'deleted-upstream-modified-locally',
          winner: 'local',
          message: `upstream deleted it and local changed it${engine.strategy === 'fail' ? '' : "; local's copy is kept"}`,
        });
      }
    } else if (origin && !local) {
      report.push({ resource: shown, identity: origin.identity, action: 'skipped', file: upstream!.file.file, changed: false });
      // Local deleted it, or renamed it where no merge comment kept its identity: upstream's
      // change cannot land anywhere. It stays deleted, and said so, never dropped in silence.
      if (origin.entry.text !== upstream!.entry.text && !sameResource(origin.map, upstream!.map)) {
        conflicts.push({
          resource: shown,
          file: upstream!.file.file,
          path: '.',
          values: { origin: toPlain(origin.map), upstream: toPlain(upstream!.map), local: undefined },
          rule: 'modified-upstream-deleted-locally',
          winner: 'local',
          message: `upstream changed it and local deleted it${engine.strategy === 'fail' ? '' : '; it stays deleted'}`,
        });
      }
    } else if (origin && upstream && local && origin.entry.text === upstream.entry.text) {
      // Nothing new upstream: the merge would give local back byte for byte (a law the property
      // tests hold it to), so it is not run. This is most resources of most updates.
      const file = placedIn(origin, upstream, local);
      if (file !== local.file.file) {
        replaced.set(local.entry, null);
        add(file, { upstream, text: local.entry.text, moved: true });
      }
      report.push({ resource: shown, identity: local.identity, action: 'merged', file, changed: file !== local.file.file });
    } else {
      // Seed 001: "A resource in both upstream and local will be merged into local."
      // Local left as origin had it (the usual update): one parse serves both; the merge never
      // changes its inputs.
      const localMap = local!.map;
      // Where the merged resource goes; conflicts and decisions name that file.
      const file = origin ? placedIn(origin, upstream!, local!) : local!.file.file;
      const originMap = origin && origin.entry.text === local!.entry.text ? localMap : origin?.map;
      const result = engine.merge(
        { origin: originMap, upstream: upstream!.map, local: localMap },
        {
          file: local!.file.file,
          document: local!.entry.index,
          files: Object.fromEntries(
            (['origin', 'upstream', 'local'] as const).flatMap((s) =>
              t[s] ? [[s, { file: t[s]!.file.file, document: t[s]!.entry.index }]] : [],
            ),
          ),
        },
      );
      for (const c of result.conflicts) conflicts.push(formatConflict(c, shown, file, c.winner, engine.strategy));
      for (const d of result.decisions) decisions.push(formatDecision(d, shown, file));
      const changed = result.node !== local!.map || file !== local!.file.file;
      const merged =
        result.node === undefined
          ? null
          : result.node === local!.map
            ? local!.entry.text
            : printMergedDocument(local!.document, result.node as YamlNode);
      if (file === local!.file.file) {
        if (changed) replaced.set(local!.entry, merged);
      } else {
        replaced.set(local!.entry, null);
        // With no local edit and nothing pinned the merge gives upstream's resource: it moves with upstream's bytes.
        const asUpstream = origin!.entry.text === local!.entry.text && result.conflicts.length === 0 && result.decisions.length === 0;
        if (merged !== null) add(file, { upstream: upstream!, text: asUpstream ? upstream!.entry.text : merged, moved: true });
      }
      report.push({ resource: shown, identity: local!.identity, action: 'merged', file, changed });
    }
    // Each resource is in one tuple: what was parsed for it is not needed again.
    for (const side of ['origin', 'upstream', 'local'] as const) t[side]?.release();
  }

  const files = (list: { file: InputFile }[]) => list.map((r) => r.file);
  const localOf = new Map<DocumentEntry, DocumentEntry>();
  for (const t of tuples) if (t.upstream && t.local) localOf.set(t.upstream.entry, t.local.entry);
  return { ...assemble(files(sides.local), files(sides.upstream), replaced, additions, localOf), report, conflicts, decisions };
}

/**
 * A file split into documents by the scanner, or undefined when it cannot delimit them (or a
 * document it declined does not parse alone into one document): then the file is parsed whole,
 * which also names any error in it. Each document is identified by the scan or, where the scan
 * declines it or is unsure of its identity, by a parse of that document alone.
 */
function scanFile(
  f: SourceFile,
  side: Side,
  trace: Trace,
  parseText: ParseText,
  identified: readonly IdentifiedDocument[] | undefined,
): { file: InputFile; resources: (s: Side) => Located[] } | undefined {
  const documents: DocumentEntry[] = [];
  const read: ({ scanned: ScannedResource } | { parsed: SourceDocument })[] = [];
  let whole = false;
  const take = (d: IdentifiedDocument) => {
    if (whole) return; // the file is parsed whole: the rest is not worth reading
    const index = documents.length;
    if (d.resource) {
      documents.push({ index, text: d.text, empty: d.empty });
      read.push({ scanned: d.resource });
      return;
    }
    const alone = parseAlone(d.text, f.path, side, parseText);
    if (!alone) {
      whole = true;
      return;
    }
    trace?.push(`${f.path}#${index}`);
    const parsed = { ...alone, index };
    documents.push(parsed);
    read.push({ parsed });
  };
  if (identified) identified.forEach(take);
  else {
    trace?.push(`scan ${f.path}`);
    // Each document is identified as the scan reads it: its scanned tree is not kept.
    if (!scanEachDocument(f.text, (d) => take(identifyScanned(d, f.text)))) return undefined;
  }
  if (whole) return undefined;
  const file: InputFile = { file: f.path, text: f.text, documents };
  return {
    file,
    resources: (s) =>
      documents.flatMap((d, i) => {
        if (d.empty) return [];
        const how = read[i]!;
        if ('scanned' in how) return [scannedResource(s, file, d, how.scanned, trace, parseText)];
        return [parsedResource(s, file, how.parsed, how.parsed.doc.contents as YAMLMap)];
      }),
  };
}

/** A document's text parsed alone: one document, a map unless empty; else undefined. */
function parseAlone(text: string, path: string, side: Side, parseText: ParseText): SourceDocument | undefined {
  let docs: readonly SourceDocument[];
  try {
    docs = parseText(text, path, side).documents;
  } catch (error) {
    if (error instanceof MergeInputError) return undefined;
    throw error;
  }
  const only = docs.length === 1 ? docs[0]! : undefined;
  if (!only || (!only.empty && !isMap(only.doc.contents))) return undefined;
  return only;
}

/** A file parsed whole: anything the scanner does not model, and every input error. */
function parseFile(f: SourceFile, side: Side, trace: Trace, parseText: ParseText): { file: InputFile; resources: (s: Side) => Located[] } {
  const parsed = parseText(f.text, f.path, side);
  for (const d of parsed.documents) trace?.push(`${f.path}#${d.index}`);
  const file: InputFile = { file: f.path, text: f.text, documents: parsed.documents };
  return {
    file,
    resources: (s) =>
      parsed.documents.flatMap((document) => {
        if (document.empty) return [];
        const contents = document.doc.contents;
        if (!isMap(contents)) {
          throw new MergeInputError(
            'not-a-mapping',
            f.path,
            document.index,
            `${s} document is not a mapping (a resource must be a YAML map)`,
            s,
          );
        }
        return [parsedResource(s, file, document, contents)];
      }),
  };
}

function locate(side: Side, files: readonly { resources: (s: Side) => Located[] }[]): Located[] {
  const out: Located[] = [];
  for (const file of files) {
    // One resource twice in one file cannot be matched by file either: the input is refused.
    const seen = new Map<string, Located>();
    for (const resource of file.resources(side)) {
      const identity = resource.identity;
      if (identity) {
        const key = identityKey(identity);
        const previous = seen.get(key);
        if (previous) {
          throw new MergeInputError(
            'duplicate-resource',
            resource.file.file,
            resource.entry.index,
            `${side} has ${formatIdentity(identity)} twice in this file: here and in document ${previous.entry.index}`,
            side,
          );
        }
        seen.set(key, resource);
      }
      out.push(resource);
    }
  }
  return out;
}

/**
 * Identities some side has in more than one file. Upstreams do ship one resource in two files;
 * kpt then matches its copies file by file, and so does the merge: each copy is merged, added or
 * deleted with the copies of the same file, never with the other file's.
 */
function identitiesInSeveralFiles(located: Record<Side, Located[]>): Set<string> {
  const several = new Set<string>();
  for (const side of ['local', 'upstream', 'origin'] as const) {
    const fileOf = new Map<string, string>();
    for (const r of located[side]) {
      if (!r.identity) continue;
      const key = identityKey(r.identity);
      const first = fileOf.get(key);
      if (first === undefined) fileOf.set(key, r.file.file);
      else if (first !== r.file.file) several.add(key);
    }
  }
  return several;
}

/** Tuples in output order: local's resources first, then new ones as upstream lists them. */
function collateResources(located: Record<Side, Located[]>): Tuple[] {
  const byKey = new Map<string, Tuple>();
  const order: Tuple[] = [];
  const perFile = identitiesInSeveralFiles(located);
  const keyOf = (r: Located): string => {
    // A document that is not a resource is matched by its place: file and index.
    if (!r.identity) return `\u0001${r.file.file}\u0000${r.entry.index}`;
    const key = identityKey(r.identity);
    return perFile.has(key) ? `${key}\u0000${r.file.file}` : key;
  };
  for (const side of ['local', 'upstream', 'origin'] as const) {
    for (const r of located[side]) {
      const key = keyOf(r);
      let t = byKey.get(key);
      if (!t) {
        t = { key };
        byKey.set(key, t);
        order.push(t);
      }
      t[side] = r;
    }
  }
  return order;
}

/** A resource written into a file it was not in locally: added upstream, or moved there by upstream. */
interface Addition {
  /** Upstream's copy: its place in upstream's file orders the additions. */
  readonly upstream: Located;
  readonly text: string;
  /** Moved by upstream from another file (else added upstream). */
  readonly moved: boolean;
}

/**
 * The file a resource every side has ends in: the 3-way rule applied to its path. Where local
 * left it in origin's file, upstream's file (a move upstream made, or none); where local moved
 * it, local's file, whatever upstream did.
 */
function placedIn(origin: Located, upstream: Located, local: Located): string {
  return local.file.file === origin.file.file ? upstream.file.file : local.file.file;
}

function describe(t: Tuple): string {
  const any = t.local ?? t.upstream ?? t.origin!;
  return any.identity ? formatIdentity(any.identity) : `${any.file.file}[${any.entry.index}]`;
}

function sameResource(a: YAMLMap, b: YAMLMap): boolean {
  return deepEqual(stripBookkeeping(toPlain(a)), stripBookkeeping(toPlain(b)));
}

function stripBookkeeping(value: unknown): unknown {
  const meta = (value as { metadata?: { annotations?: Record<string, unknown> } }).metadata;
  if (meta?.annotations) {
    for (const a of bookkeepingAnnotations) delete meta.annotations[a];
    if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
  }
  return value;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ak = Object.keys(a);
  const bo = b as Record<string, unknown>;
  return ak.length === Object.keys(bo).length && ak.every((k) => k in bo && deepEqual((a as Record<string, unknown>)[k], bo[k]));
}

/**
 * Rebuilds the local files: untouched chunks verbatim, merged ones reprinted, additions placed
 * as upstream's file orders them (`localOf`: local's document for each upstream document).
 */
function assemble(
  local: readonly InputFile[],
  upstream: readonly InputFile[],
  replaced: Map<DocumentEntry, string | null>,
  additions: Map<string, Addition[]>,
  localOf: ReadonlyMap<DocumentEntry, DocumentEntry>,
): { files: SourceFile[]; deleted: string[] } {
  const files: SourceFile[] = [];
  const deleted: string[] = [];
  const localPaths = new Set(local.map((f) => f.file));
  // Added and moved resources are written in the order upstream's file has them.
  for (const list of additions.values()) list.sort((a, b) => a.upstream.entry.index - b.upstream.entry.index);
  for (const file of local) {
    const added = additions.get(file.file) ?? [];
    const touched = added.length > 0 || file.documents.some((d) => replaced.has(d));
    if (!touched) {
      files.push({ path: file.file, text: file.text });
      continue;
    }
    const after = placeAdditions(file, added, localOf);
    const chunks: string[] = [...(after.get('start') ?? [])];
    let kept = chunks.length;
    for (const d of file.documents) {
      const text = replaced.has(d) ? replaced.get(d)! : d.text;
      if (text !== null) {
        if (!d.empty) kept++;
        chunks.push(text);
      }
      const next = after.get(d) ?? [];
      chunks.push(...next);
      kept += next.length;
    }
    const last = after.get('end') ?? [];
    chunks.push(...last);
    kept += last.length;
    if (kept === 0) {
      deleted.push(file.file);
      continue;
    }
    files.push({ path: file.file, text: joinDocuments(chunks, startsWithMarker(file.text)) });
  }
  // Resources added upstream in files local does not have: new files, upstream's own bytes.
  for (const file of upstream) {
    if (localPaths.has(file.file)) continue;
    const added = additions.get(file.file);
    if (!added || added.length === 0) continue;
    // Every resource of upstream's file, each as upstream wrote it: the file is upstream's, bytes
    // between documents included.
    const whole = added.length === file.documents.filter((d) => !d.empty).length && added.every((r) => r.text === r.upstream.entry.text);
    files.push({
      path: file.file,
      text: whole
        ? file.text
        : joinDocuments(
            added.map((r) => r.text),
            startsWithMarker(file.text),
          ),
    });
  }
  return { files, deleted };
}

/**
 * Where each addition goes in a local file. A resource added upstream goes last, as it always
 * has. A resource upstream moved here goes right after local's copy of the nearest document
 * before it in upstream's file that this local file holds, or first when there is none, so that
 * with no local edit local's file lists its resources as upstream's does. Additions at one place
 * keep upstream's order.
 */
function placeAdditions(
  file: InputFile,
  added: readonly Addition[],
  localOf: ReadonlyMap<DocumentEntry, DocumentEntry>,
): Map<DocumentEntry | 'start' | 'end', string[]> {
  const here = new Set(file.documents);
  const after = new Map<DocumentEntry | 'start' | 'end', string[]>();
  for (const r of added) {
    const documents = r.upstream.file.documents;
    let anchor: DocumentEntry | 'start' | 'end' = r.moved ? 'start' : 'end';
    for (let i = documents.indexOf(r.upstream.entry) - 1; r.moved && i >= 0 && anchor === 'start'; i--) {
      const mine = localOf.get(documents[i]!);
      if (mine && here.has(mine)) anchor = mine;
    }
    const list = after.get(anchor) ?? [];
    list.push(r.text);
    after.set(anchor, list);
  }
  return after;
}

const startsWithMarker = (text: string): boolean => /^---(\s|$)/.test(text);

/**
 * Joins document chunks into one stream, adding `---` and newlines only where needed. The stream
 * starts with a bare `---` line only if its file did (`leadingMarker`): when a file's first
 * documents are removed, the next one's `---` goes, as kpt writes it. The parts go to an array
 * joined once: testing the end of a string that grows by `+=` flattens it each time, quadratic
 * in a stream of thousands of documents.
 */
function joinDocuments(chunks: readonly string[], leadingMarker: boolean): string {
  const parts: string[] = [];
  let endsWithNewline = true;
  for (const raw of chunks) {
    if (raw === '') continue;
    let chunk = raw;
    if (parts.length > 0) {
      if (!endsWithNewline) parts[parts.length - 1] = withFinalLineBreak(parts[parts.length - 1]!);
      if (!startsWithMarker(chunk)) parts.push('---\n');
    } else if (!leadingMarker && chunk.startsWith('---\n')) {
      chunk = chunk.slice(4);
      if (chunk === '') continue;
    }
    parts.push(chunk);
    endsWithNewline = chunk.endsWith('\n');
  }
  // A final line break is added as kpt writes it: a `|` block ending the stream becomes `|-`.
  if (parts.length > 0 && !endsWithNewline) parts[parts.length - 1] = withFinalLineBreak(parts[parts.length - 1]!);
  return parts.join('');
}
