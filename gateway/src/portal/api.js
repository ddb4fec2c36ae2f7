// The portal's calls to the gateway, with the session's token as a bearer
// credential. A 401 means the session has expired or was revoked: SessionEnded.

let token = null;

export class SessionEnded extends Error {}

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `Request failed (${status})`);
    this.status = status;
    this.details = error?.details ?? {};
  }
}

export function useToken(value) {
  token = value;
}

/** The envelope of a successful answer ({ data, pagination? }); throws SessionEnded or ApiError otherwise. */
export async function api(method, path, body) {
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  let answer = null;
  try {
    answer = await res.json();
  } catch {
    answer = null;
  }
  if (res.status === 401) throw new SessionEnded(answer?.error?.message ?? 'Session ended');
  if (!res.ok || !answer?.success) throw new ApiError(res.status, answer?.error);
  return answer;
}

/** A query string of the values given (empty ones left out). */
export function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== '') q.set(name, String(value));
  const text = q.toString();
  return text ? `?${text}` : '';
}
