// The document GET /v1/openapi.json and .yaml serve, built once and again only when a
// service's own document changed: the services' documents are read again at most
// every refreshMs, when the document is asked for (the asker gets the one already
// built and does not wait), and the build runs only when one of them differs from
// those it was built from. Its JSON is written once per build, its YAML once on first
// demand. A service that does not answer, or a set of documents the builder refuses
// (a deploy half done), leaves the last good document served; only before the first
// good build is there nothing to serve (503).
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { serviceUnavailable } from '@lpm/shared/errors';
import type { ServiceDocument } from './document.ts';

export interface DocumentSource {
  name: string;
  /** The service's document's text, or null when none of its replicas gave one. */
  read(): Promise<string | null>;
}

export interface ServedDocumentOptions {
  sources: readonly DocumentSource[];
  build(documents: ServiceDocument[]): unknown;
  /** How often the sources are read again, at most. */
  refreshMs: number;
  logger: { warn(obj: object, msg: string): void };
}

/** A build's answers, encoded once: a request only writes the bytes. */
export class BuiltDocument {
  readonly json: Buffer;
  /** The signature of the sources' texts it was built from. */
  readonly from: string;
  private readonly document: unknown;
  private yamlBytes?: Buffer;

  constructor(document: unknown, from: string) {
    this.document = document;
    this.from = from;
    this.json = Buffer.from(JSON.stringify(document));
  }

  get yaml(): Buffer {
    return (this.yamlBytes ??= Buffer.from(stringify(this.document, { aliasDuplicateObjects: false })));
  }
}

/** The paths and tags of a service's document text; throws when it is not one. */
function documentOf(text: string): ServiceDocument {
  const doc = JSON.parse(text) as { paths?: unknown; tags?: unknown } | null;
  if (typeof doc !== 'object' || doc === null) throw new Error('not a JSON object');
  return { paths: (doc.paths ?? {}) as ServiceDocument['paths'], tags: (doc.tags ?? []) as ServiceDocument['tags'] };
}

export class ServedDocument {
  private built?: BuiltDocument;
  /** Each source's last text, by its index (a source that does not answer keeps its last one). */
  private readonly texts: (string | undefined)[] = [];
  /** The signature of texts that did not build: not tried again until one changes. */
  private refused?: string;
  private readAt = -Infinity;
  private refreshing?: Promise<void>;

  private readonly opts: ServedDocumentOptions;

  constructor(opts: ServedDocumentOptions) {
    this.opts = opts;
  }

  /** The document: the last good build, refreshed in the background when due; 503 before any. */
  async current(): Promise<BuiltDocument> {
    if (this.built) {
      if (performance.now() - this.readAt >= this.opts.refreshMs) void this.refresh().catch(() => {});
      return this.built;
    }
    await this.refresh();
    if (!this.built) throw serviceUnavailable('Service unavailable');
    return this.built;
  }

  /** One refresh at a time, shared. Rejects only while no document was ever built. */
  private refresh(): Promise<void> {
    return (this.refreshing ??= this.readAndBuild().finally(() => {
      this.readAt = performance.now();
      this.refreshing = undefined;
    }));
  }

  private async readAndBuild(): Promise<void> {
    const { sources } = this.opts;
    const read = await Promise.all(sources.map((s) => s.read().catch(() => null)));
    read.forEach((text, i) => {
      if (text !== null) this.texts[i] = text;
    });
    const missing = sources.filter((_, i) => this.texts[i] === undefined).map((s) => s.name);
    if (missing.length) return this.keep(new Error(`no OpenAPI document from ${missing.join(', ')}`));
    const signature = this.signature();
    if (signature === this.built?.from || signature === this.refused) return;
    try {
      this.built = new BuiltDocument(this.opts.build(this.texts.map((text) => documentOf(text!))), signature);
    } catch (e) {
      this.refused = signature;
      this.keep(e as Error);
    }
  }

  /** A refresh that could not build: the last good document stays; without one, the request is 503. */
  private keep(cause: Error): void {
    if (!this.built) throw serviceUnavailable('Service unavailable', { cause });
    this.opts.logger.warn({ err: cause }, 'OpenAPI document not rebuilt: the last good one is served');
  }

  private signature(): string {
    const hash = createHash('sha256');
    for (const text of this.texts) hash.update(text ?? '').update('\0');
    return hash.digest('hex');
  }
}
