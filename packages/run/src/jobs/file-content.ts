/** A symlink of a package: carried as a symlink (git's mode 120000), its target never followed. */
export interface SymlinkContent {
  readonly kind: 'symlink';
  readonly target: string;
}

/** An executable file (git's mode 100755, an `exec:` function's script): bytes and bit carried as they are. */
export interface ExecutableContent {
  readonly kind: 'executable';
  readonly bytes: Uint8Array;
}

/**
 * A file's content: text, bytes when it is not UTF-8 (kept byte for byte), an executable file or
 * a symlink. Only text is read by the variant's mutations and the render; the rest is carried.
 */
export type FileContent = string | Uint8Array | SymlinkContent | ExecutableContent;

/** What the mutations and the render never read: carried through a run untouched. */
export type CarriedContent = Exclude<FileContent, string>;

/** A package's files: path relative to the package directory (`/`-separated) → content. */
export type PackageFiles = ReadonlyMap<string, FileContent>;

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Text when the bytes are UTF-8, else the bytes themselves (a binary file must come back intact). */
export function fileContent(bytes: Uint8Array): FileContent {
  try {
    return decoder.decode(bytes);
  } catch {
    return bytes;
  }
}

/** Text files (what the variant's mutations read) apart from the rest (binary, executable, symlinks: carried through untouched). */
export function splitBinary(files: PackageFiles): { text: Map<string, string>; binary: Map<string, CarriedContent> } {
  const text = new Map<string, string>();
  const binary = new Map<string, CarriedContent>();
  for (const [path, content] of files) {
    if (typeof content === 'string') text.set(path, content);
    else binary.set(path, content);
  }
  return { text, binary };
}
