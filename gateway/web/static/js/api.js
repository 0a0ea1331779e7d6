// api.js: calls to the gateway (Connect protocol: POST JSON) and the human seat's endpoints.

/** ApiError is an error answered by the server: {code, message} with an HTTP status. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || '';
  }
}

async function readError(resp) {
  let body = null;
  try {
    body = await resp.json();
  } catch {
    // not JSON
  }
  return new ApiError(resp.status, body && body.code, body && body.message);
}

/** rpc calls a Connect method: rpc('parley.referee.v1.RefereeService', 'ListGames', {}). */
export async function rpc(service, method, request = {}) {
  const resp = await fetch(`/${service}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(request),
  });
  if (!resp.ok) throw await readError(resp);
  return resp.json();
}

export const referee = (method, req) => rpc('parley.referee.v1.RefereeService', method, req);
export const tournaments = (method, req) => rpc('parley.tournament.v1.TournamentService', method, req);
export const analytics = (method, req) => rpc('parley.analytics.v1.AnalyticsService', method, req);

/** getJSON fetches a JSON document. */
export async function getJSON(path) {
  const resp = await fetch(path, { headers: { Accept: 'application/json' } });
  if (!resp.ok) throw await readError(resp);
  return resp.json();
}

/** postJSON posts a JSON body and returns the JSON answer. */
export async function postJSON(path, body) {
  const resp = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!resp.ok) throw await readError(resp);
  return resp.json();
}

/**
 * follow opens a server-sent event stream and calls handlers[eventName](data) with each
 * event's parsed JSON data. The stream is closed on 'end' (the gateway's convention) and on
 * 'error' events sent by the server. Returns a function that closes the stream.
 */
export function follow(url, handlers, onState = () => {}) {
  const es = new EventSource(url);
  let closed = false;
  const close = () => {
    if (!closed) {
      closed = true;
      es.close();
      onState('closed');
    }
  };
  es.onopen = () => onState('open');
  es.onerror = () => {
    if (!closed) onState(es.readyState === EventSource.CLOSED ? 'failed' : 'reconnecting');
    if (es.readyState === EventSource.CLOSED) closed = true;
  };
  for (const [name, fn] of Object.entries(handlers)) {
    if (name === 'end' || name === 'error') continue;
    es.addEventListener(name, (e) => fn(JSON.parse(e.data), e));
  }
  es.addEventListener('end', (e) => {
    if (handlers.end) handlers.end(e.data ? JSON.parse(e.data) : {});
    close();
  });
  // A server-sent 'error' event carries data; a connection error does not.
  es.addEventListener('error', (e) => {
    if (!e.data) return;
    if (handlers.error) handlers.error(JSON.parse(e.data));
    close();
  });
  return close;
}
