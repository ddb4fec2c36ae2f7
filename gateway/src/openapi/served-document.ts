// The document GET /v1/openapi.json and .yaml serve, built once and again only when a
// service's own document changed: the services' documents are read again at most
// every refreshMs, when the document is asked for (the asker gets the one already
// built and does not wait), and the build runs only when one of them differs from
// those it was built from. Its JSON is written once per build, its YAML once on first
// demand. A service that does not answer, or a set of documents the builder refuses
// (a deploy half done), leaves the last good document served; only before the first
// good build is there nothing to serve (503). Each is sent compressed to a client
// that accepts it (about 22 KB of brotli for the 480 KB YAML), compressed once.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import zlib, { brotliCompressSync, gzipSync } from 'node:zlib';
import Negotiator from 'negotiator';
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

export type ContentCoding = 'br' | 'gzip' | 'identity';

/** Compressed as well as a request can wait for once, about 20 ms for the YAML. */
const COMPRESS: Record<Exclude<ContentCoding, 'identity'>, (b: Buffer) => Buffer> = {
  br: (b) =>
    brotliCompressSync(b, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length },
    }),
  gzip: (b) => gzipSync(b, { level: 6 }),
};

/** Best first: among codings the client gives the same weight, ours decides. */
const CODINGS: ContentCoding[] = ['br', 'gzip', 'identity'];
/** negotiator 1.x's encoding() takes the preferred order; @types/negotiator still describes 0.6. */
const negotiated = (req: IncomingMessage) =>
  new Negotiator(req) as unknown as {
    encoding(available: string[], opts: { preferred: string[] }): string | undefined;
  };

/** One format of a build, with each content coding made on its first demand: a request only writes bytes. */
export class EncodedBody {
  private readonly codings = new Map<ContentCoding, Buffer>();
  readonly identity: Buffer;

  constructor(identity: Buffer) {
    this.identity = identity;
    this.codings.set('identity', identity);
  }

  /** The coding the client's Accept-Encoding prefers among brotli, gzip and none (RFC 9110 §12.5.3), and the body in it. */
  for(req: IncomingMessage): { coding: ContentCoding; body: Buffer } {
    const coding = (negotiated(req).encoding(CODINGS, { preferred: CODINGS }) ?? 'identity') as ContentCoding;
    let body = this.codings.get(coding);
    if (!body) this.codings.set(coding, (body = COMPRESS[coding as Exclude<ContentCoding, 'identity'>](this.identity)));
    return { coding, body };
  }
}

/** A build's answers, encoded once. */
export class BuiltDocument {
  readonly json: EncodedBody;
  /** The signature of the sources' texts it was built from. */
  readonly from: string;
  private readonly document: unknown;
  private yamlBody?: EncodedBody;

  constructor(document: unknown, from: string) {
    this.document = document;
    this.from = from;
    this.json = new EncodedBody(Buffer.from(JSON.stringify(document)));
  }

  get yaml(): EncodedBody {
    return (this.yamlBody ??= new EncodedBody(Buffer.from(stringify(this.document, { aliasDuplicateObjects: false }))));
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
