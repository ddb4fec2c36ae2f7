// The clients domain's conditions, with the spec's messages.
import { businessRule, duplicate } from '@lpm/shared/errors';


export const duplicateDocument = (type: 'PF' | 'PJ') =>
  type === 'PF'
    ? duplicate('Duplicate CPF', 'duplicate_cpf', { field: 'cpf' })
    : duplicate('Duplicate CNPJ', 'duplicate_cnpj', { field: 'cnpj' });

export const typeImmutable = () => businessRule('Client type cannot be changed', 'client_type_immutable', { field: 'type' });

export const hasActiveCases = () => businessRule('Client has active cases', 'client_has_active_cases');
