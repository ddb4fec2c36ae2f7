// The team settings' conditions, with the messages callers see.
import { businessRule, invalidField } from '@lpm/shared/errors';

export const duplicatePhase = (field: string, phase: string) => invalidField(field, 'Duplicate phase', { phase });
export const duplicateClosureDate = (date: string) =>
  invalidField('court_calendar.closures', 'Duplicate closure date', { date });
/** A phase removed from a list while records of the service owning it still use it. */
export const phaseInUse = (field: string, phases: string[]) =>
  businessRule('Phase in use', 'phase_in_use', { field, phases });
export const duplicateWatch = (index: number) =>
  invalidField(`publications.watches.${index}`, 'Duplicate watch: the same OAB number and state twice');
