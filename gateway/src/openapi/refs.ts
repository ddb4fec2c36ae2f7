// What the document's builders share: its JSON types and references to named schemas.
/** An object of the document; a builder narrows the fields it reads. */
export type Json = Record<string, unknown>;

/** A named (titled) schema as the builders read it. */
export interface NamedSchema extends Json {
  title: string;
  description: string;
  properties: Json;
  required: string[];
}

export const REF = '#/components/schemas/';
export const ref = (name: string) => ({ $ref: `${REF}${name}` });
