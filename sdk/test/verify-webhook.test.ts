// verifyWebhook's options: a tolerance that is not a finite number >= 0 throws on
// every call, before any delivery is judged (NaN would let any timestamp through).
import { deliveryBody as body, deliveryNow as now, signedAt } from '@lpm/test-kit/signed-delivery';
import { verifyWebhook, WebhookVerificationError } from '../src/index.ts';

test.each([
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-1', -1],
  ['a string', '300'],
])(
  'when toleranceSeconds is %s, then verifyWebhook throws a RangeError, even for a delivery a year old',
  (_, tolerance) => {
    const opts = { now, toleranceSeconds: tolerance as number };
    expect(() => verifyWebhook(body, signedAt(-365 * 86_400), 'whsec_test', opts)).toThrow(RangeError);
    expect(() => verifyWebhook(body, signedAt(0), 'whsec_test', opts)).toThrow(
      /^toleranceSeconds must be a finite number >= 0, not /,
    );
  },
);

test('when toleranceSeconds is 0 or a fraction, then it is used as given', () => {
  expect(verifyWebhook(body, signedAt(0), 'whsec_test', { now, toleranceSeconds: 0 }).type).toBe('case.created');
  expect(() => verifyWebhook(body, signedAt(1), 'whsec_test', { now, toleranceSeconds: 0 })).toThrow(
    WebhookVerificationError,
  );
  expect(verifyWebhook(body, signedAt(-1), 'whsec_test', { now, toleranceSeconds: 1.5 }).type).toBe('case.created');
  expect(() => verifyWebhook(body, signedAt(2), 'whsec_test', { now, toleranceSeconds: 1.5 })).toThrow(
    'Timestamp outside the tolerance',
  );
});

test('when now is an invalid Date, then verifyWebhook throws a RangeError rather than accept any timestamp', () => {
  expect(() => verifyWebhook(body, signedAt(0), 'whsec_test', { now: new Date('not a date') })).toThrow(RangeError);
});
