// How a webhook URL appears in logs and e-mails: scheme and host (with a port
// other than the default), never the path, query or user info, which often carry
// the receiver's credential (a token in the path or in ?key=...).
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(not a URL)';
  }
}
