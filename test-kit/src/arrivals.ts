// Figures of when requests arrived (their times in ms), for checks of a rate limit.

/** The most arrivals within any one second. */
export function busiestSecond(at: number[]): number {
  const sorted = [...at].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
