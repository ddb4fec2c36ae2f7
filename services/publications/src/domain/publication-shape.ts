// A publication's record made from a DJEN communication, and its read shape.
import { foldText } from '@lpm/shared/text';
import { iso } from '@lpm/shared/time';
import type { PublicationView } from '../contract/publication-schemas.ts';
import type { PublicationRecord, StoredDeadline } from '../data/publication-entity.ts';
import type { TrailDay } from '../upstream/activities-service.ts';
import type { DjenItem } from '../upstream/djen-items.ts';
import { cnjDigits, maskedCnj } from './cnj.ts';

const ENTITIES: Record<string, string> = { nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The text without its HTML: tags dropped (a line break for <br> and block ends), entities decoded, blank runs folded. */
export function plainText(html: string): string {
  return html
    .replace(/<(br|\/p|\/div|\/li|\/tr|\/h\d)\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
      }
      return ENTITIES[e.toLowerCase()] ?? all;
    })
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The fields a communication gives a publication (the same on every read of it). */
export function contentOf(item: DjenItem) {
  const text_plain = plainText(item.text);
  return {
    djen_id: item.id,
    hash: item.hash,
    made_available_date: item.made_available_date,
    court: item.court.toUpperCase(),
    organ: item.organ,
    kind: item.kind,
    document_type: item.document_type,
    class: item.class,
    case_number: maskedCnj(item.case_number),
    case_digits: cnjDigits(item.case_number),
    text: item.text,
    text_plain,
    search_text: foldText(`${text_plain}\n${item.case_number ?? ''}`),
    link: item.link,
    active: item.active,
    recipients: item.recipients,
    lawyers: item.lawyers,
  };
}

export type PublicationContent = ReturnType<typeof contentOf>;

/** A stored deadline as the API shows it, its trail an array again. */
export const deadlineView = (d: StoredDeadline | null): PublicationView['deadline'] =>
  d && { ...d, trail: typeof d.trail === 'string' ? (JSON.parse(d.trail) as TrailDay[]) : d.trail };

export const viewOf = (r: PublicationRecord): PublicationView => ({
  id: r._id,
  djen_id: r.djen_id,
  hash: r.hash,
  made_available_date: r.made_available_date,
  publication_date: r.publication_date,
  court: r.court,
  organ: r.organ,
  kind: r.kind,
  document_type: r.document_type,
  class: r.class,
  case_number: r.case_number,
  text: r.text,
  text_plain: r.text_plain,
  link: r.link,
  active: r.active,
  recipients: r.recipients,
  lawyers: r.lawyers,
  case_id: r.case_id,
  status: r.status,
  deadline: deadlineView(r.deadline),
  activity_id: r.activity_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});
