// How long a POST must take before its webhook counts as slow or hanging. A fixed
// second singles out a receiver that hangs while the others answer in tens of ms;
// on a busy process every POST takes longer (its answers wait for the event loop and
// the CPU), and a fixed second would then send every webhook's attempts the queued
// way, which costs a busy process more work per delivery than it saves. So the bar is
// the higher of the floor and a multiple of the typical answered POST, this process's
// median over its last SAMPLES answers.

const SAMPLES = 128;
/** The median is taken again after this many new answers. */
const REFRESH_EVERY = 32;

export class PostLatency {
  private readonly samples = new Float64Array(SAMPLES);
  private count = 0;
  private sinceRefresh = 0;
  private median = 0;
  private readonly floorMs: number;
  private readonly factor: number;

  /**
   * @param floorMs the bar while POSTs answer quickly, or before any has answered
   * @param factor how many typical POSTs a slow one lasts at least
   */
  constructor(floorMs: number, factor: number) {
    this.floorMs = floorMs;
    this.factor = factor;
  }

  /** An answered POST's duration (a timeout or a refused connection says nothing of the typical answer). */
  answered(ms: number): void {
    this.samples[this.count % SAMPLES] = ms;
    this.count++;
    if (++this.sinceRefresh >= REFRESH_EVERY || this.count <= REFRESH_EVERY) this.refresh();
  }

  /** How long a POST runs before its webhook is slow (answered) or hanging (still in flight). */
  get slowAfterMs(): number {
    return Math.max(this.floorMs, this.factor * this.median);
  }

  private refresh(): void {
    this.sinceRefresh = 0;
    const held = this.samples.slice(0, Math.min(this.count, SAMPLES)).sort();
    this.median = held[held.length >> 1];
  }
}
