// E-mail reminders (docs/decisions.md §5): at the due moment minus before_minutes, one
// e-mail to the assignee. The time signal writes activity.reminder_due once; this
// turns it into the mail (the consumer's dedupe makes a redelivery send nothing).
import type { Mail, Mailer } from '@lpm/shared/mailer';
import { isObject } from '@lpm/shared/upstream/service-client';

/** The mail for an activity in its detail shape; null when it has no assignee e-mail. */
export function reminderMail(activity: unknown): Mail | null {
  if (!isObject(activity)) return null;
  const assignee = activity.assigned_to;
  if (!isObject(assignee) || typeof assignee.email !== 'string' || !assignee.email) return null;
  const title = typeof activity.title === 'string' ? activity.title : '';
  const when = [activity.due_date, activity.due_time].filter((v) => typeof v === 'string').join(' ');
  const lines = [
    `Hello ${typeof assignee.name === 'string' ? assignee.name : ''},`.replace(' ,', ','),
    '',
    `Reminder: "${title}" is due ${when || 'soon'}.`,
    ...(isObject(activity.case) ? [caseLine(activity.case)] : []),
    `Activity: ${String(activity.id)}`,
  ];
  return { to: assignee.email, subject: `Reminder: ${title}`, text: lines.join('\n') };
}

/** The case line of a reminder: the case's title (its id without one) and number, as its summary shape has them. */
function caseLine(c: Record<string, unknown>): string {
  const name = typeof c.title === 'string' ? c.title : String(c.id);
  return `Case: ${name}${typeof c.number === 'string' && c.number ? ` (${c.number})` : ''}`;
}

export class Reminders {
  private readonly mailer: Mailer;
  constructor(mailer: Mailer) {
    this.mailer = mailer;
  }

  /** Sends the reminder of an activity.reminder_due event's object; rejects when the relay refuses (the consumer retries). */
  async send(activity: unknown): Promise<boolean> {
    const mail = reminderMail(activity);
    if (!mail) return false;
    await this.mailer.send(mail);
    return true;
  }
}
