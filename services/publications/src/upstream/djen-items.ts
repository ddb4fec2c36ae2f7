// A communication of the Comunica API (GET /comunicacao) as the service reads it:
// the fields it keeps, checked, with both date formats the API is known to use.
import { isObject } from '@lpm/shared/upstream/service-client';

export interface DjenLawyer {
  name: string;
  oab_number: string;
  oab_uf: string;
}

export interface DjenItem {
  id: number;
  hash: string;
  made_available_date: string;
  court: string;
  organ: string | null;
  kind: string | null;
  document_type: string | null;
  class: { code: string | null; name: string | null } | null;
  case_number: string | null;
  text: string;
  link: string | null;
  active: boolean;
  recipients: { name: string; side: string | null }[];
  lawyers: DjenLawyer[];
}

const str = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null;

/** `yyyy-mm-dd` (a time after it ignored) or `dd/mm/yyyy`; the first preferred. */
export function djenDate(item: Record<string, unknown>): string | null {
  const iso = str(item.data_disponibilizacao);
  const m1 = iso && /^(\d{4}-\d{2}-\d{2})/.exec(iso);
  if (m1) return m1[1];
  const br = str(item.datadisponibilizacao);
  const m2 = br && /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(br);
  return m2 ? `${m2[3]}-${m2[2]}-${m2[1]}` : null;
}

function lawyersOf(v: unknown): DjenLawyer[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((x) => {
    const a = isObject(x) && isObject(x.advogado) ? x.advogado : null;
    const number = a && str(a.numero_oab)?.replace(/\D/g, '');
    const uf = a && str(a.uf_oab)?.toUpperCase();
    return a && number && uf ? [{ name: str(a.nome) ?? '', oab_number: number.replace(/^0+/, ''), oab_uf: uf }] : [];
  });
}

function recipientsOf(v: unknown): DjenItem['recipients'] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((x) => (isObject(x) && str(x.nome) ? [{ name: str(x.nome)!, side: str(x.polo) }] : []));
}

/** The item read, or null when it lacks an id, a hash or a date (skipped and logged by the caller). */
export function readDjenItem(raw: unknown): DjenItem | null {
  if (!isObject(raw)) return null;
  const id = typeof raw.id === 'number' ? raw.id : Number(str(raw.id));
  const hash = str(raw.hash);
  const date = djenDate(raw);
  if (!Number.isSafeInteger(id) || !hash || !date) return null;
  const code = str(raw.codigoClasse);
  const className = str(raw.nomeClasse);
  return {
    id,
    hash,
    made_available_date: date,
    court: str(raw.siglaTribunal) ?? '',
    organ: str(raw.nomeOrgao),
    kind: str(raw.tipoComunicacao),
    document_type: str(raw.tipoDocumento),
    class: code || className ? { code, name: className } : null,
    case_number: str(raw.numeroprocessocommascara) ?? str(raw.numero_processo),
    text: typeof raw.texto === 'string' ? raw.texto : '',
    link: str(raw.link),
    active: raw.ativo !== false,
    recipients: recipientsOf(raw.destinatarios),
    lawyers: lawyersOf(raw.destinatarioadvogados),
  };
}
