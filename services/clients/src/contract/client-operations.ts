// The documentation of the clients operations beside their contract: the errors come from
// the contract's constructors and the request schemas (shared/src/http/operation-docs.ts).
import { clientNotFound, noFieldsToUpdate } from '@lpm/shared/errors';
import type { OperationDocs, ServiceDocs } from '@lpm/shared/http/operation-docs';
import { ID_RULE, LIST_RULE, PUT_RULE, schemaMessage } from '@lpm/shared/http/operation-docs';
import { duplicateDocument, hasActiveCases, typeImmutable } from './client-errors.ts';

export const CLIENT_OPERATIONS: OperationDocs = {
  'GET /v1/clients': {
    operationId: 'listClients',
    summary: 'List clients',
    description: `The team's clients, newest first by default. \`search\` matches name, e-mail, CPF or CNPJ, ignoring case and accents; a document also matches when the query is its digits only. ${LIST_RULE}`,
    errors: [schemaMessage('type'), schemaMessage('status'), schemaMessage('segment'), schemaMessage('sort')],
  },
  'POST /v1/clients': {
    operationId: 'createClient',
    summary: 'Create a client (PF or PJ)',
    description:
      'Creates an individual (`type` PF, with the PF fields) or a company (`type` PJ, with the PJ fields), status `active`, `cases_count` 0. The CPF (NNN.NNN.NNN-NN) and CNPJ (NN.NNN.NNN/NNNN-NN; letters allowed in the first 12 positions, stored upper case) formats are checked, not their check digits, and are unique in the team among all clients. Emits `client.created`.',
    examples: {
      pf: {
        summary: 'An individual with a CPF',
        value: {
          type: 'PF',
          name: 'Maria da Silva Santos',
          email: 'maria.santos@example.com',
          phone: '+55 11 98765-4321',
          cpf: '123.456.789-00',
          birth_date: '1985-03-15',
          gender: 'feminino',
          profession: 'Engenheira',
          segment: 'premium',
          address: {
            street: 'Rua das Flores',
            number: '123',
            complement: 'Apto 45',
            neighborhood: 'Jardim Paulista',
            city: 'São Paulo',
            state: 'SP',
            zip_code: '01234-567',
            country: 'Brasil',
          },
        },
      },
      pj: {
        summary: 'A company with a CNPJ',
        value: {
          type: 'PJ',
          name: 'Metalúrgica Souza',
          legal_name: 'Metalúrgica Souza Ltda.',
          cnpj: '12.345.678/0001-90',
          contact_person: 'João Souza',
          segment: 'vip',
        },
      },
    },
    errors: [
      schemaMessage('type'),
      schemaMessage('cpf'),
      schemaMessage('cnpj'),
      duplicateDocument('PF'),
      duplicateDocument('PJ'),
    ],
  },
  'GET /v1/clients/{id}': {
    operationId: 'getClient',
    summary: 'Read a client',
    description: `The full client: the fields of its type, the address with all eight parts, notes, tags, metadata and \`cases_count\` (cases linked to it, any status). ${ID_RULE}`,
    errors: [clientNotFound()],
  },
  'PUT /v1/clients/{id}': {
    operationId: 'updateClient',
    summary: 'Update a client',
    description: `${PUT_RULE} \`status: "active"\` reactivates an inactive client; \`status: "inactive"\` follows the rule of DELETE. The type cannot change. Emits \`client.updated\`.`,
    examples: {
      segment: {
        summary: 'A new phone and segment',
        value: { phone: '+55 11 91234-5678', segment: 'vip', notes: 'Cliente desde 2019' },
      },
    },
    errors: [
      schemaMessage('cpf'),
      schemaMessage('cnpj'),
      noFieldsToUpdate(),
      clientNotFound(),
      duplicateDocument('PF'),
      duplicateDocument('PJ'),
      hasActiveCases(),
      typeImmutable(),
    ],
  },
  'DELETE /v1/clients/{id}': {
    operationId: 'deactivateClient',
    summary: 'Deactivate a client',
    description:
      'active -> inactive (soft delete, `deactivated_at` set), refused while the client has ativo cases (checked against the cases service at that moment). Deactivating an inactive client answers 200. Emits `client.deactivated`.',
    errors: [clientNotFound(), hasActiveCases()],
  },
  'GET /v1/clients/{id}/cases': {
    operationId: 'listClientCases',
    summary: "List a client's cases",
    description: `The cases linked to the client, any status. ${LIST_RULE}`,
    errors: [schemaMessage('sort'), clientNotFound()],
  },
};

export const CLIENT_DOCS: ServiceDocs = {
  tags: [
    {
      name: 'Clients',
      prefix: '/v1/clients',
      description: 'Individuals (PF, with a CPF) and companies (PJ, with a CNPJ).',
      idExample: 'cli_01jd3k8q5x0v7m2n4p6r8t0w2y',
    },
  ],
  operations: CLIENT_OPERATIONS,
};
