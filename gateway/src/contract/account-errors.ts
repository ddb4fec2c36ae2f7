// The accounts domain's conditions, with the messages operators and services see.
import { conflict, notFound } from '@lpm/shared/errors';

export const teamNotFound = () => notFound('Team not found');

export const keyNotFound = () => notFound('Key not found');

export const duplicateEmail = () => conflict('Email already registered in this team', 'duplicate_email');
