// Ports for processes a test starts itself, as the launcher picks them.
export { freePortBlock } from '../../scripts/system.ts';
