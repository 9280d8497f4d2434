/**
 * Every host of the config file, each with its link: what the CLI, `drover web` and MCP open
 * to reach other machines. Health is there for every host at all times; a client only while
 * that host's link is up. One host failing never touches another's link.
 */
import { ArgumentError } from '../process/index.js';
import { readHostsConfig, UnknownHostError, type HostEntry } from './config.js';
import { HostLink, type HostHealth, type HostLinkOptions } from './link.js';

export interface HostsOptions extends HostLinkOptions {
  /** Only these hosts (each must be in the file); all of them by default. */
  readonly names?: readonly string[];
  /** Start connecting at once (default), or leave it to each link's start(). */
  readonly start?: boolean;
}

export class Hosts {
  private readonly links: ReadonlyMap<string, HostLink>;

  private constructor(
    /** The config file the hosts came from, when they came from one. */
    readonly configPath: string | undefined,
    entries: readonly HostEntry[],
    options: HostsOptions,
  ) {
    this.links = new Map(entries.map((entry) => [entry.name, new HostLink(entry, options)]));
    if (options.start ?? true) for (const link of this.links.values()) link.start();
  }

  /** The hosts of this user's config file (`options.env` says where it is). */
  static open(options: HostsOptions = {}): Hosts {
    const config = readHostsConfig(options.env);
    let entries = config.hosts;
    if (options.names !== undefined) {
      const known = config.hosts.map((host) => host.name);
      const unknown = options.names.find((name) => !known.includes(name));
      if (unknown !== undefined) throw new UnknownHostError(unknown, config.path, known);
      entries = config.hosts.filter((host) => options.names!.includes(host.name));
    }
    return new Hosts(config.path, entries, options);
  }

  /** Hosts given directly rather than read from the file. */
  static of(entries: readonly HostEntry[], options: HostsOptions = {}): Hosts {
    const names = new Set<string>();
    for (const entry of entries) {
      if (names.has(entry.name)) throw new ArgumentError(`host ${entry.name} is given twice`);
      names.add(entry.name);
    }
    return new Hosts(undefined, entries, options);
  }

  get names(): string[] {
    return [...this.links.keys()];
  }

  /** The link of one host; UnknownHostError when there is no such host. */
  link(name: string): HostLink {
    const link = this.links.get(name);
    if (link === undefined) throw new UnknownHostError(name, this.configPath ?? 'the hosts given', this.names);
    return link;
  }

  /** Every host's health, in the file's order. */
  health(): HostHealth[] {
    return [...this.links.values()].map((link) => link.health);
  }

  /** Called on any host's change of health; returns the unsubscribe. */
  onHealth(listener: (health: HostHealth) => void): () => void {
    const unsubscribers = [...this.links.values()].map((link) => link.onHealth(listener));
    return () => {
      for (const unsubscribe of unsubscribers) unsubscribe();
    };
  }

  /** Every host's health once each has settled (see HostLink.settled), within one deadline. */
  settled(options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<HostHealth[]> {
    return Promise.all([...this.links.values()].map((link) => link.settled(options)));
  }

  async close(): Promise<void> {
    await Promise.all([...this.links.values()].map((link) => link.close()));
  }
}
