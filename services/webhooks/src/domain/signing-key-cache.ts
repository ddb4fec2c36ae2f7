// The signing keys of webhooks' secrets, each secret opened once rather than at
// every attempt: kept by the secret's sealed text (a sealed text names one secret
// for good), the oldest dropped first past `kept`. A webhook's keys are its current
// secret's and those of its previous secrets still live when it signs, all from
// the record in hand: no store read.
import type { WebhookRecord } from '../data/webhook-entity.ts';
import type { SecretBox } from './secret-box.ts';
import { liveSecrets } from './secret-rotation.ts';
import { signingKeys, type SigningKeys } from './signing.ts';

export class SigningKeyCache {
  private readonly box: SecretBox;
  private readonly kept: number;
  private readonly keys = new Map<string, SigningKeys>();

  constructor(box: SecretBox, kept: number) {
    this.box = box;
    this.kept = kept;
  }

  /** The current secret's keys first, then those of the previous secrets live at `now`. */
  keysOf(
    webhook: Pick<WebhookRecord, 'secret_sealed' | 'previous_secrets'>,
    now = new Date(),
  ): [SigningKeys, ...SigningKeys[]] {
    const current = this.of(webhook.secret_sealed);
    if (!webhook.previous_secrets?.length) return [current];
    return [current, ...liveSecrets(webhook.previous_secrets, now).map((s) => this.of(s.sealed))];
  }

  private of(sealed: string): SigningKeys {
    let keys = this.keys.get(sealed);
    if (keys === undefined) {
      keys = signingKeys(this.box.open(sealed));
      this.keys.set(sealed, keys);
      if (this.keys.size > this.kept) this.keys.delete(this.keys.keys().next().value!);
    }
    return keys;
  }
}
