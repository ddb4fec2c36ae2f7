// The trail an activity stores packed into one string reads back as the calculator made it.
import { defaultCourtCalendar } from '@lpm/shared/court-calendar';
import type { Deadline, TrailDay } from '../src/data/activity-entity.ts';
import { deadlineOf } from '../src/domain/deadlines/deadlines.ts';
import { deadlineView, storedDeadline } from '../src/domain/deadlines/stored-deadline.ts';

const court = { ...defaultCourtCalendar(), closures: [{ date: '2025-12-01', name: 'Expediente suspenso' }] };

/** Rules over the year's holidays, the recess and a closure, every counting and start. */
function rules() {
  const out = [];
  for (let month = 1; month <= 12; month += 1)
    for (const day of [3, 17, 28])
      for (const days of [1, 5, 15, 30])
        for (const counting of ['business', 'calendar'] as const) {
          const date = `2025-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          out.push(
            { start: { published: date }, days, counting },
            { start: { made_available: date }, days, counting, double: true },
            { start: { from: date }, days, counting },
          );
        }
  return out;
}

describe('a stored deadline', () => {
  test('when any computed deadline is stored, then its trail is one string and reads back equal', () => {
    const all = rules();
    for (const rule of all) {
      const computed = deadlineOf(rule, court);
      const stored = storedDeadline(computed);
      expect(typeof stored.trail).toBe('string');
      expect(deadlineView(stored)).toEqual(computed);
    }
    expect(all.length).toBe(864);
  });

  test('when a 30 business-day trail is stored, then its string is a fraction of the entries as JSON', () => {
    const computed = deadlineOf({ start: { published: '2025-12-10' }, days: 30 }, court);
    const stored = storedDeadline(computed);
    expect(computed.trail.length).toBeGreaterThan(40);
    expect((stored.trail as string).length * 3).toBeLessThan(JSON.stringify(computed.trail).length);
  });

  test('when a trail is kept as entries (stored before packing, or days not one after another), then it reads as it is', () => {
    const entries: TrailDay[] = [
      { date: '2025-03-03', counted: false, reason: 'start day (CPC art. 224)' },
      { date: '2025-03-05', counted: true, reason: null },
    ];
    const deadline: Deadline = {
      start_date: '2025-03-05',
      due_date: '2025-03-05',
      publication_date: null,
      days: 1,
      trail: entries,
    };
    expect(storedDeadline(deadline).trail).toEqual(entries);
    expect(deadlineView({ ...deadline })).toEqual(deadline);
  });
});
