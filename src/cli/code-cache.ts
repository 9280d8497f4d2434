/**
 * Runs the bundled CLI. The bundle's chunks are CommonJS scripts beside the bin; each is compiled
 * through V8 with a code cache drover keeps itself, saved as the process exits.
 *
 * Why not Node's own compile cache: Node saves a module's cache when it compiles the module,
 * before any of it runs, so it holds little more than the module's top level. Every function a
 * command calls is compiled on its first call, again on every start. A cache saved at exit holds
 * those functions too, and a command's start skips compiling them (a cold `drover pane map` over
 * 100 panes took 14 ms less than with Node's cache).
 *
 * The cache lives beside Node's own compile cache: in the directory NODE_COMPILE_CACHE names, else
 * the temporary directory, as drover-code-cache-UID with one directory per Node version inside.
 * That directory must be the user's own and writable by nobody else, or the cache is not used;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's. A cache file names the size and
 * modification time of the chunk it was made from and is used only while both still hold (the
 * file's name holds a hash of the chunk's directory, so each install has its own); V8 itself
 * refuses a cache made by another V8 or under other flags. A chunk's cache is saved again when a
 * command that has not run it before runs it (up to a bound), so the functions each command
 * needs end up in it. A cache that cannot be read or written is skipped: it only saves time.
 * An install's caches of chunks it no longer has (an upgrade in place renames them) are removed
 * when it saves.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

/** The chunk that holds the CLI proper, beside the bin in the bundle. */
const BUNDLED_MAIN = 'main.cjs';

const MAGIC = 'drover-code-cache 1\n';
/** Distinct commands whose compiled functions a chunk's cache takes in; past it the cache stays as it is. */
const MAX_COMMANDS = 16;

interface CacheHeader {
  /** Size and modification time (ms) of the chunk the cache was made from. */
  readonly source: readonly [number, number];
  /** The commands that have run this chunk and whose functions the cache holds. */
  readonly commands: readonly string[];
}

/** What became of a chunk's cache on this run. */
export type CacheOutcome = 'off' | 'missing' | 'stale' | 'rejected' | 'used';

interface Pending {
  readonly script: Script;
  readonly cacheFile: string;
  readonly header: CacheHeader;
}

/** Where compiled code is cached for this Node, or undefined when caching is off. */
export function codeCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const owner = join(env.NODE_COMPILE_CACHE || tmpdir(), `drover-code-cache-${process.getuid?.() ?? 'user'}`);
  return join(owner, `${process.version}-${process.arch}`);
}

/**
 * Whether the cache's directory (the parent of `dir`) can be trusted: it is missing, or a real
 * directory of this user that nobody else can write. Another user's directory in a shared
 * temporary directory could hold code of theirs.
 */
function trusted(dir: string): boolean {
  try {
    const owner = lstatSync(dirname(dir));
    return owner.isDirectory() && owner.uid === process.getuid?.() && (owner.mode & 0o022) === 0;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * The command a run serves, as a cache key: its first two words (`pane map`). Option values
 * that look like words make a different key, which costs one more save and nothing else.
 */
export function commandKey(argv: readonly string[]): string {
  return argv.filter((arg) => /^[a-z][a-z-]*$/.test(arg)).slice(0, 2).join(' ') || '(none)';
}

/**
 * The file a chunk's cache is saved in: the chunk's name and a hash of its directory, so two
 * installs of drover (a clone and a global install, say) never take turns overwriting one file.
 */
export function cacheFileName(chunkDir: string, name: string): string {
  return `${name}${installSuffix(chunkDir)}`;
}

/** The end of every cache file name of the chunks in `chunkDir`: a hash of the directory. */
function installSuffix(chunkDir: string): string {
  let hash = 0x811c9dc5; // FNV-1a, 32 bits: a short path needs no more
  for (const byte of Buffer.from(chunkDir)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return `.${hash.toString(16).padStart(8, '0')}.cache`;
}

/**
 * Removes this install's caches of chunks it no longer has: an upgrade in place names its
 * chunks anew, and the old caches would stay in the temporary directory for good.
 */
function pruneGoneChunks(cacheDir: string, chunkDir: string): void {
  const suffix = installSuffix(chunkDir);
  for (const file of readdirSync(cacheDir)) {
    if (file.endsWith(suffix) && !existsSync(join(chunkDir, file.slice(0, -suffix.length)))) rmSync(join(cacheDir, file), { force: true });
  }
}

/** Loads CommonJS chunks from one directory, each once, through the code cache. */
export class ChunkLoader {
  private readonly modules = new Map<string, { exports: unknown }>();
  private readonly pending: Pending[] = [];
  /** Each chunk loaded, by name, and what became of its cache. */
  readonly outcomes = new Map<string, CacheOutcome>();
  private readonly requireOutside: NodeJS.Require;
  private readonly cacheDir: string | undefined;

  constructor(
    private readonly dir: string,
    cacheDir: string | undefined,
    private readonly command: string,
  ) {
    this.cacheDir = cacheDir !== undefined && trusted(cacheDir) ? cacheDir : undefined;
    this.requireOutside = createRequire(join(dir, 'noop.js'));
  }

  /** Runs chunk `name` (once) and returns its exports. */
  load(name: string): unknown {
    const file = join(this.dir, name);
    const known = this.modules.get(file);
    if (known !== undefined) return known.exports;
    const source = readFileSync(file, 'utf8');
    const { size, mtimeMs } = statSync(file);
    const cacheFile = this.cacheDir === undefined ? undefined : join(this.cacheDir, cacheFileName(this.dir, name));
    const cached = cacheFile === undefined ? 'off' : readCache(cacheFile, size, mtimeMs);
    // One line, so the chunk's line numbers in a stack trace are its own.
    const wrapped = `(function (exports, require, module, __filename, __dirname, __droverImportMetaUrl) {${source}\n})`;
    const script = new Script(wrapped, { filename: file, ...(typeof cached === 'object' ? { cachedData: cached.data } : {}) });
    const outcome: CacheOutcome = typeof cached !== 'object' ? cached : script.cachedDataRejected === true ? 'rejected' : 'used';
    this.outcomes.set(name, outcome);
    if (cacheFile !== undefined) {
      const commands = typeof cached === 'object' && outcome === 'used' ? cached.header.commands : [];
      if (outcome !== 'used' || (!commands.includes(this.command) && commands.length < MAX_COMMANDS)) {
        this.pending.push({ script, cacheFile, header: { source: [size, mtimeMs], commands: [...commands, this.command] } });
      }
    }
    const module = { exports: {} };
    this.modules.set(file, module);
    const run = script.runInThisContext() as (...args: unknown[]) => void;
    const require = (id: string): unknown => (id.startsWith('./') ? this.load(id.slice(2)) : this.requireOutside(id));
    run.call(module.exports, module.exports, require, module, file, this.dir, pathToFileURL(file).href);
    return module.exports;
  }

  /** Saves the cache of every chunk that ran without one (or with one lacking this command). */
  save(): void {
    const pending = this.pending.splice(0);
    if (pending.length === 0 || this.cacheDir === undefined) return;
    try {
      mkdirSync(this.cacheDir, { recursive: true, mode: 0o700 });
      if (!trusted(this.cacheDir)) return;
      for (const { script, cacheFile, header } of pending) {
        const temporary = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(temporary, Buffer.concat([Buffer.from(`${MAGIC}${JSON.stringify(header)}\n`), script.createCachedData()]), { mode: 0o600 });
        renameSync(temporary, cacheFile);
      }
      pruneGoneChunks(this.cacheDir, this.dir);
    } catch {
      // A cache that cannot be written (a read-only or full disk) only costs the next start its time.
    }
  }
}

/** The cache saved for a chunk of this size and time; 'stale' when it was made from another (or is not a cache). */
function readCache(cacheFile: string, size: number, mtimeMs: number): { header: CacheHeader; data: Buffer } | 'missing' | 'stale' {
  let bytes: Buffer;
  try {
    bytes = readFileSync(cacheFile);
  } catch {
    return 'missing';
  }
  const end = bytes.indexOf(0x0a, MAGIC.length);
  if (!bytes.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC)) || end < 0) return 'stale';
  try {
    const header = JSON.parse(bytes.subarray(MAGIC.length, end).toString('utf8')) as CacheHeader;
    if (!Array.isArray(header.source) || header.source[0] !== size || header.source[1] !== mtimeMs || !Array.isArray(header.commands)) return 'stale';
    return { header, data: bytes.subarray(end + 1) };
  } catch {
    return 'stale';
  }
}

/**
 * Runs the CLI from the bundle beside the bin at `binUrl`, saving the code cache at exit.
 * Returns false when there is no bundle there (tsc's unbundled tree), leaving the caller to
 * import the CLI as ES modules.
 */
export function runBundledCli(binUrl: URL): boolean {
  const dir = dirname(fileURLToPath(binUrl));
  if (!existsSync(join(dir, BUNDLED_MAIN))) return false;
  const loader = new ChunkLoader(dir, codeCacheDir(process.env), commandKey(process.argv.slice(2)));
  process.once('exit', () => loader.save());
  loader.load(BUNDLED_MAIN);
  return true;
}
