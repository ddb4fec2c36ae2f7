// The metrics the deploy/monitoring files ask Prometheus for: the series names in
// the alert rules' and the dashboard's PromQL expressions.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

export const MONITORING = resolve(import.meta.dirname, '../../deploy/monitoring');

export interface AlertRule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}

export function alertRules(): AlertRule[] {
  const file = parse(readFileSync(join(MONITORING, 'alerts.yml'), 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return file.groups.flatMap((g) => g.rules);
}

export function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana', 'lpm-dashboard.json'), 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/** The series names of a PromQL expression: identifiers that are not functions, keywords, labels, strings or durations. */
export function seriesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .filter((m) => !/^\s*\(/.test(bare.slice(m.index + m[0].length)) && !KEYWORDS.has(m[0].toLowerCase()))
    .map((m) => m[0]);
}
