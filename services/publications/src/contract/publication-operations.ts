// The documentation of the publications operations beside their contract (shared/src/http/operation-docs.ts).
import { caseNotFound, forbidden, noFieldsToUpdate } from '@lpm/shared/errors';
import type { OperationDocs, ServiceDocs } from '@lpm/shared/http/operation-docs';
import { ID_RULE, LIST_RULE, schemaMessage } from '@lpm/shared/http/operation-docs';
import { invalidDateRange, publicationNotFound } from './publication-errors.ts';

export const PUBLICATION_OPERATIONS: OperationDocs = {
  'GET /v1/publications': {
    operationId: 'listPublications',
    summary: 'List publications',
    description: `The team's publications from the DJEN, newest made available first (\`-made_available_date\`). Filters combine: \`status\`, \`case_id\`, \`matched\` (linked to a case or not), \`court\` (the court's acronym), \`from\`/\`to\` (the day made available, inclusive) and \`search\` (the text and the case number, ignoring case and accents). ${LIST_RULE}`,
    errors: [schemaMessage('status'), schemaMessage('matched'), invalidDateRange()],
  },
  'POST /v1/publications/sync': {
    operationId: 'syncPublications',
    summary: 'Poll the DJEN now',
    description:
      "Starts a poll of the DJEN for every team's watches now, beside the scheduled one (admin keys only). Answers 202 at once: `started` is false when a poll is already under way, on this replica or another.",
    errors: [forbidden()],
  },
  'GET /v1/publications/{id}': {
    operationId: 'getPublication',
    summary: 'Read a publication',
    description: `The publication with its text as published and without HTML, its dates, its case and its deadline. ${ID_RULE}`,
    errors: [publicationNotFound()],
  },
  'PUT /v1/publications/{id}': {
    operationId: 'updatePublication',
    summary: 'Treat a publication',
    description:
      'Sets `status` (new, treated, dismissed); links a case by hand with `case_id` (null unlinks), which computes its deadline in mode suggest or creates its deadline activity in mode create (once per publication); `deadline_days` computes the deadline again with those days. The answer is the whole publication. Emits `publication.updated` when anything changed.',
    examples: {
      treated: {
        summary: 'Linked to its case and treated',
        value: { case_id: 'case_01jn0000000000000000000000', status: 'treated' },
      },
      days: { summary: 'A five-day deadline', value: { deadline_days: 5 } },
    },
    errors: [noFieldsToUpdate(), publicationNotFound(), caseNotFound()],
  },
};

export const PUBLICATION_DOCS: ServiceDocs = {
  tags: [
    {
      name: 'Publications',
      prefix: '/v1/publications',
      description:
        "Court publications from the DJEN for the team's watched lawyers (settings `publications`): kept once, matched to the team's case by its CNJ number, dated by the team's court calendar and given their deadline.",
      idExample: 'pub_01jx2f8g0000000000000000aa',
    },
  ],
  operations: PUBLICATION_OPERATIONS,
};
