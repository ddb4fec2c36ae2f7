// Reading a process's /metrics (Prometheus' text format) in tests.

export interface Scrape {
  /** The families the process declares (`# TYPE` lines), with their type. */
  families: Map<string, string>;
  /** Every sample line: series name, labels as written, value. */
  samples: { name: string; labels: string; value: number }[];
  text: string;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/;

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  const text = await res.text();
  const families = new Map<string, string>();
  const samples: Scrape['samples'] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1], type[2]);
    const sample = SAMPLE.exec(line);
    if (sample) samples.push({ name: sample[1], labels: sample[2] ?? '', value: Number(sample[3]) });
  }
  return { families, samples, text };
}

/** The sum of the series named `name` whose labels include every one of `labels` (e.g. `outcome="acked"`). */
export function total(s: Scrape, name: string, ...labels: string[]): number {
  return s.samples
    .filter((x) => x.name === name && labels.every((l) => x.labels.includes(l)))
    .reduce((sum, x) => sum + x.value, 0);
}

/** The series names a family serves: a histogram's _bucket, _sum and _count, a summary's _sum and _count. */
export function seriesNames(family: string, type: string): string[] {
  if (type === 'histogram') return [`${family}_bucket`, `${family}_sum`, `${family}_count`];
  if (type === 'summary') return [family, `${family}_sum`, `${family}_count`];
  return [family];
}
