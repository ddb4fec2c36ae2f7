// deploy/monitoring as Prometheus reads it: the alert rules parse (promtool, from
// Debian's prometheus package: .ci/run installs it), the compose scrape
// configuration loads them, and each alert has its runbook in deploy/README.md.
// That the metrics they name are served is checked against a running system in
// test/metrics.test.ts.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MONITORING, alertRules, dashboardExpressions, seriesIn } from '@lpm/test-kit/monitoring-files';

const promtool = (...args: string[]) => execFileSync('promtool', args, { encoding: 'utf8', stdio: 'pipe' });

test('promtool accepts the alert rules', () => {
  expect(promtool('check', 'rules', join(MONITORING, 'alerts.yml'))).toContain('SUCCESS: 6 rules found');
});

test("promtool accepts compose's Prometheus configuration with its rule file", () => {
  // Under the run's directory, which the teardown removes.
  const dir = mkdtempSync(join(process.env.LPM_TEST_DIR!, 'prometheus-'));
  copyFileSync(join(MONITORING, 'alerts.yml'), join(dir, 'alerts.yml'));
  const config = readFileSync(join(MONITORING, 'prometheus.yml'), 'utf8');
  expect(config).toContain('/etc/prometheus/alerts.yml');
  writeFileSync(join(dir, 'prometheus.yml'), config.replace('/etc/prometheus/alerts.yml', join(dir, 'alerts.yml')));
  expect(promtool('check', 'config', join(dir, 'prometheus.yml'))).toContain('SUCCESS: 1 rule files found');
});

test('every alert links its runbook, a section of deploy/README.md', () => {
  const readme = readFileSync(resolve(MONITORING, '..', 'README.md'), 'utf8');
  const rules = alertRules();
  expect(rules.map((r) => r.alert)).toEqual(
    expect.arrayContaining([
      'DeadLetterQueueNotEmpty',
      'OutboxEventStuck',
      'WebhookDeliverySuccessLow',
      'GatewayLatencyHigh',
      'QueueWithoutConsumers',
    ]),
  );
  for (const rule of rules) {
    expect([rule.alert, rule.annotations?.runbook]).toEqual([
      rule.alert,
      `deploy/README.md#${rule.alert.toLowerCase()}`,
    ]);
    expect([rule.alert, new RegExp(`^#### ${rule.alert}$`, 'm').test(readme)]).toEqual([rule.alert, true]);
  }
});

test("the expressions' series names are read as Prometheus would", () => {
  expect(
    seriesIn(
      'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service="gateway"}[5m]))) > 1',
    ),
  ).toEqual(['http_request_duration_seconds_bucket']);
  expect(seriesIn('sum(rate(a_total{outcome="x"}[15m])) / sum(rate(a_total[15m])) < 0.95 and on (queue) b')).toEqual([
    'a_total',
    'a_total',
    'b',
  ]);
  expect(dashboardExpressions().length).toBeGreaterThan(20);
});
