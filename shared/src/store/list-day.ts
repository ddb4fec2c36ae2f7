// The day a list record is counted under, shared by the list counts and their deltas.

/** A UTC day number, or null for the records with no value of the sort field. */
export type Day = number | null;
