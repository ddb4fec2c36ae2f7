// The priority cases and activities are given: its values, and the rank a list sorts it by.
export const PRIORITIES = ['alta', 'media', 'baixa'] as const;

export type Priority = (typeof PRIORITIES)[number];

/** priority sorts by meaning: alta > media > baixa. */
export const PRIORITY_RANK: Record<Priority, number> = { alta: 3, media: 2, baixa: 1 };
