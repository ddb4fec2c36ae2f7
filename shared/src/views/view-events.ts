// The events that keep the local views of clients and cases current. A view is
// first stored when a record is linked to its client or case (the link check reads
// the owner's facts and records them), so a created event tells a view nothing it
// needs: storing views of clients and cases that nothing links to cost four writes
// per new client for no reader. A case view holds the title and number, which only
// case.updated changes (it comes with every phase change and every edit made while
// archiving). A durable queue keeps its bindings across deploys, hence the retired ones.

export const CLIENT_VIEW_EVENTS = { bindings: ['client.updated', 'client.deactivated'], retiredBindings: ['client.created'] };

export const CASE_VIEW_EVENTS = { bindings: ['case.updated'], retiredBindings: ['case.created', 'case.archived', 'case.phase_changed'] };
