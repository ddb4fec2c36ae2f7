// The events that keep the local views of clients and cases current. A view is
// first stored when a record is linked to its client or case (the link check reads
// the owner's facts and records them), so a created event tells a view nothing it
// needs: storing views of clients and cases that nothing links to cost four writes
// per new client for no reader. A case view holds the title and number, which only
// case.updated changes (it comes with every phase change and every edit made while
// archiving). A durable queue keeps its bindings across deploys, hence the retired ones.
//
// `shown` are the owner's fields a view shows. An update whose previous attributes
// name none of them (a case's priority, a client's address) brings the view nothing:
// it holds what the last change of those fields set, recorded with that change's own
// instant, so skipping the update cannot let older facts win later.

export const CLIENT_VIEW_EVENTS = {
  bindings: ['client.updated', 'client.deactivated'],
  retiredBindings: ['client.created'],
  shown: ['name', 'type', 'email', 'phone', 'status'],
};

export const CASE_VIEW_EVENTS = {
  bindings: ['case.updated'],
  retiredBindings: ['case.created', 'case.archived', 'case.phase_changed'],
  shown: ['title', 'number'],
};

/** Whether an event may change what a view shows: it names no previous attributes (a state it sets whole), or names one of `shown`. */
export function changesShown(previous: Record<string, unknown> | null | undefined, shown: readonly string[]): boolean {
  return !previous || shown.some((f) => f in previous);
}
