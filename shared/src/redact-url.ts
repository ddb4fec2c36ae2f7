// A connection URL as messages and log lines show it: its password replaced by
// ***. Read from the text itself, not a URL parser, so a URL that fails to parse
// (the one a configuration error names) is hidden too. The password runs from the
// first `:` after `scheme://` to the last `@`: it may hold `/`, `#`, `?` or `@`
// unescaped, and a URL with an `@` in its query loses more than its password,
// never less.

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Where the password of `url` lies, or null when it names none. */
function passwordSpan(url: string): { start: number; end: number } | null {
  const scheme = SCHEME.exec(url);
  if (!scheme) return null;
  const end = url.lastIndexOf('@');
  const colon = url.indexOf(':', scheme[0].length);
  if (end < 0 || colon < 0 || colon > end) return null;
  return { start: colon + 1, end };
}

/** `url` with its password shown as `***` (`mongodb://lpm:***@h1,h2/db`); unchanged when it has none. */
export function redactUrl(url: string): string {
  const span = passwordSpan(url);
  return span ? `${url.slice(0, span.start)}***${url.slice(span.end)}` : url;
}

/** `text` (a parser's error message, say) with the password of `url`, as written or decoded, shown as `***`. */
export function hidePasswordOf(url: string, text: string): string {
  const span = passwordSpan(url);
  if (!span || span.end === span.start) return text;
  const written = url.slice(span.start, span.end);
  let decoded = written;
  try {
    decoded = decodeURIComponent(written);
  } catch {
    // Not percent-encoded as it should be: only the written form can appear.
  }
  return [written, decoded].reduce((shown, secret) => shown.split(secret).join('***'), text);
}
