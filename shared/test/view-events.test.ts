import { CASE_VIEW_EVENTS, CLIENT_VIEW_EVENTS, changesShown } from '../src/views/view-events.ts';

test.each([
  { name: 'a case retitled', previous: { title: 'Antes' }, shown: CASE_VIEW_EVENTS.shown, expected: true },
  { name: 'a case renumbered', previous: { number: null }, shown: CASE_VIEW_EVENTS.shown, expected: true },
  {
    name: 'a case whose priority and phase changed',
    previous: { priority: 'media', phase: 'recebido' },
    shown: CASE_VIEW_EVENTS.shown,
    expected: false,
  },
  {
    name: 'a client deactivated',
    previous: { status: 'active', deactivated_at: null },
    shown: CLIENT_VIEW_EVENTS.shown,
    expected: true,
  },
  {
    name: 'a client whose e-mail changed',
    previous: { email: 'a@b.example' },
    shown: CLIENT_VIEW_EVENTS.shown,
    expected: true,
  },
  {
    name: 'a client whose segment changed',
    previous: { segment: 'regular' },
    shown: CLIENT_VIEW_EVENTS.shown,
    expected: false,
  },
  { name: 'an event with no previous attributes', previous: null, shown: CASE_VIEW_EVENTS.shown, expected: true },
])('when the event is $name, then it may change the view: $expected', ({ previous, shown, expected }) => {
  expect(changesShown(previous, shown)).toBe(expected);
});
