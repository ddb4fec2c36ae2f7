// The clients domain's conditions, each with its fixed message (docs/decisions.md §1, §5).
import { businessRule, duplicate } from '@lpm/shared/errors';

export const duplicateDocument = (type: 'PF' | 'PJ') =>
  type === 'PF'
    ? duplicate('Duplicate CPF', 'duplicate_cpf', { field: 'cpf' })
    : duplicate('Duplicate CNPJ', 'duplicate_cnpj', { field: 'cnpj' });

export const typeImmutable = () =>
  businessRule('Client type cannot be changed', 'client_type_immutable', { field: 'type' });

export const hasActiveCases = () => businessRule('Client has active cases', 'client_has_active_cases');
