// The alert rules docs/operations.md offers: promtool checks them, and its rule unit tests show
// each fires on the series our metrics make, and not before its time. Skips without promtool;
// fails so under CI=true.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../../test/helpers/collector.js';
import { PROMTOOL_SKIP, promtool } from '../../../../test/helpers/metrics.js';

const temp = tempDir();
afterAll(() => temp.remove());

/** The YAML block under "Alert rules" in docs/operations.md. */
function documentedRules(): string {
  const doc = readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('### Alert rules'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('No ```yaml block under "### Alert rules" in docs/operations.md');
  return block[1]!;
}

/** A `promtool test rules` file for the rules at `rules`: series every minute, alerts expected at times. */
const unitTests = (rules: string) => `
rule_files: [${JSON.stringify(rules)}]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # Retry window 4 h; the oldest delivery is past 80% (11520 s) from minute 3: firing 5 min later.
      - series: 'batched_analytics_delivery_retry_window_seconds{instance="a", job="collector"}'
        values: '14400x20'
      - series: 'batched_analytics_backlog_oldest_age_seconds{instance="a", job="collector"}'
        values: '11400+60x20'
      # One URL's breaker opens at minute 3; another's flaps open and closed.
      - series: 'batched_analytics_webhook_breaker_open{instance="a", job="collector", source="web", url="http://down.example/in"}'
        values: '0 0 0 1x17'
      - series: 'batched_analytics_webhook_breaker_open{instance="a", job="collector", source="web", url="http://flaky.example/in"}'
        values: '1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0'
    alert_rule_test:
      - eval_time: 6m
        alertname: CollectorBacklogNearRetryWindow
        exp_alerts: []
      - eval_time: 8m
        alertname: CollectorBacklogNearRetryWindow
        exp_alerts:
          - exp_labels: { severity: critical, job: collector }
            exp_annotations:
              summary: 'Undelivered messages are close to their retry window (3h 18m 0s old)'
              description: 'The oldest pending delivery will be given up soon: check the receivers (batched_analytics_webhook_requests_total) and the collectors'' throughput.'
      - eval_time: 12m
        alertname: CollectorWebhookUrlFailing
        exp_alerts: []
      - eval_time: 13m
        alertname: CollectorWebhookUrlFailing
        exp_alerts:
          - exp_labels: { severity: warning, source: web, url: 'http://down.example/in' }
            exp_annotations:
              summary: 'Webhook URL http://down.example/in of source web keeps failing'
              description: 'Its circuit breaker has been open for 10 minutes: only probes reach it, and its deliveries wait for retries or other URLs.'
`;

describe.skipIf(PROMTOOL_SKIP !== undefined)(`the documented alert rules${PROMTOOL_SKIP ? ` skipped: ${PROMTOOL_SKIP}` : ''}`, () => {
  it('pass promtool check rules', () => {
    const file = `${temp.dir}/rules.yml`;
    writeFileSync(file, documentedRules());
    const checked = promtool(['check', 'rules', file]);
    expect(checked.output).toContain('SUCCESS: 2 rules found');
    expect(checked.status).toBe(0);
  });

  it('fire on the series the collector exports, after their "for", and only for the failing URL', () => {
    const rules = `${temp.dir}/unit-rules.yml`;
    writeFileSync(rules, documentedRules());
    const tests = `${temp.dir}/unit-tests.yml`;
    writeFileSync(tests, unitTests(rules));
    const tested = promtool(['test', 'rules', tests]);
    expect(tested.output).toContain('SUCCESS');
    expect(tested.status).toBe(0);
  });
});
