// What the document's builders share: its JSON type and references to named schemas.
export type Json = Record<string, any>;

export const REF = '#/components/schemas/';
export const ref = (name: string) => ({ $ref: `${REF}${name}` });
