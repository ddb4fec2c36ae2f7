// A local stand-in of the Comunica API's GET /comunicacao, built from its documented
// shapes: communications by lawyer and day, served in pages of itensPorPagina, with
// scripted answers (a 429, an outage of 5xx, x-ratelimit-remaining at 0) taken in turn.
import { createServer, type Server } from 'node:http';
import { listenOnLoopback } from '@lpm/test-kit/listen';

export interface StandInLawyer {
  number: string;
  uf: string;
  name?: string;
}

export interface StandInItem {
  id: number;
  day: string;
  lawyers: StandInLawyer[];
  /** As the API gives it: `numeroprocessocommascara` when masked, else only `numero_processo`. */
  number: string;
  masked?: boolean;
  text?: string;
  hash?: string;
  /** False once the court cancelled it. */
  active?: boolean;
}

export interface Asked {
  oab: string;
  uf: string;
  day: string;
  page: number;
  size: number;
  userAgent: string | undefined;
  at: number;
}

type Scripted = { status: number } | { remaining: number };

export class DjenStandIn {
  readonly asked: Asked[] = [];
  private readonly items: StandInItem[] = [];
  private readonly script: Scripted[] = [];
  /** Extra items served on a given page of a lawyer's day (the same publication on two pages). */
  private readonly repeats = new Map<string, StandInItem[]>();
  private server: Server | null = null;
  url = '';

  add(...items: StandInItem[]): void {
    this.items.push(...items);
  }

  /** The next answers, in order: a status instead of the page, or the page with x-ratelimit-remaining set. */
  then(...answers: Scripted[]): void {
    this.script.push(...answers);
  }

  repeatOn(uf: string, oab: string, day: string, page: number, item: StandInItem): void {
    const key = `${uf}:${oab}:${day}:${page}`;
    this.repeats.set(key, [...(this.repeats.get(key) ?? []), item]);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const q = (k: string) => u.searchParams.get(k) ?? '';
      const asked: Asked = {
        oab: q('numeroOab'),
        uf: q('ufOab'),
        day: q('dataDisponibilizacaoInicio'),
        page: Number(q('pagina')),
        size: Number(q('itensPorPagina')),
        userAgent: req.headers['user-agent'],
        at: Date.now(),
      };
      this.asked.push(asked);
      const next = this.script.shift();
      if (u.pathname !== '/api/v1/comunicacao' || q('dataDisponibilizacaoInicio') !== q('dataDisponibilizacaoFim'))
        return void res.writeHead(422).end('{}');
      if (next && 'status' in next)
        return void res.writeHead(next.status, { 'content-type': 'application/json' }).end('{"message":"scripted"}');
      const all = this.items.filter(
        (i) => i.day === asked.day && i.lawyers.some((l) => l.number === asked.oab && l.uf === asked.uf),
      );
      const page = all.slice((asked.page - 1) * asked.size, asked.page * asked.size);
      const extra = this.repeats.get(`${asked.uf}:${asked.oab}:${asked.day}:${asked.page}`) ?? [];
      const body = { status: 'success', message: '', count: all.length, items: [...page, ...extra].map(communication) };
      const remaining = next && 'remaining' in next ? next.remaining : 50;
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'x-ratelimit-limit': '60',
          'x-ratelimit-remaining': String(remaining),
        })
        .end(JSON.stringify(body));
    });
    const port = await listenOnLoopback(this.server, 'DJEN stand-in');
    this.url = `http://127.0.0.1:${port}/api/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** An item as the API's schema gives it. */
function communication(i: StandInItem) {
  const digits = i.number.replace(/\D/g, '');
  return {
    id: i.id,
    data_disponibilizacao: i.day,
    datadisponibilizacao: i.day.split('-').reverse().join('/'),
    siglaTribunal: 'TJSP',
    tipoComunicacao: 'Intimação',
    nomeOrgao: '3ª Vara Cível',
    texto: i.text ?? `<p>Intimação n.º ${i.id}: manifeste-se a parte no prazo legal.</p>`,
    numero_processo: digits,
    ...(i.masked ? { numeroprocessocommascara: i.number } : {}),
    meio: 'D',
    meiocompleto: 'Diário de Justiça Eletrônico Nacional',
    link: `https://pje.example/${i.id}`,
    tipoDocumento: 'Despacho',
    nomeClasse: 'PROCEDIMENTO COMUM CÍVEL',
    codigoClasse: '7',
    numeroComunicacao: i.id,
    ativo: i.active ?? true,
    hash: i.hash ?? `h${i.id}`,
    destinatarios: [{ nome: 'Maria Silva', polo: 'A', comunicacao_id: i.id }],
    destinatarioadvogados: i.lawyers.map((l, n) => ({
      id: n,
      comunicacao_id: i.id,
      advogado_id: n,
      advogado: { id: n, nome: l.name ?? `Advogado ${l.number}`, numero_oab: l.number, uf_oab: l.uf },
    })),
  };
}
