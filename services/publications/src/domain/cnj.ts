// CNJ process numbers: compared on their 20 digits whatever the mask, shown masked
// (NNNNNNN-DD.AAAA.J.TR.OOOO).

/** The number's 20 digits, or null when it does not have exactly 20. */
export function cnjDigits(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const digits = raw.replace(/\D/g, '');
  return digits.length === 20 ? digits : null;
}

/** The number in the CNJ mask; as given (trimmed) when it has not 20 digits, null when empty. */
export function maskedCnj(raw: string | null | undefined): string | null {
  const digits = cnjDigits(raw);
  if (!digits) return raw?.trim() || null;
  return `${digits.slice(0, 7)}-${digits.slice(7, 9)}.${digits.slice(9, 13)}.${digits.slice(13, 14)}.${digits.slice(14, 16)}.${digits.slice(16)}`;
}
