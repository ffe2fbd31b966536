import { CliError } from './errors';
import { KEY_VARIABLE, URL_VARIABLE } from './config';
import { EXIT_ERROR, EXIT_UNREACHABLE } from './exit-codes';

// A small client for the service's REST API (node's fetch). Every error becomes a CliError carrying the
// server's own message: the API answers errors as { statusCode, error, message, requestId }.

export const DEFAULT_TIMEOUT_MS = 30_000;

/** The API could not be reached (refused, unresolvable, timed out, or the connection broke). */
export class ConnectionError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, hint, EXIT_UNREACHABLE);
  }
}

/** The API answered with an error status. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly serverMessage: string,
    readonly requestId: string | null,
    hint?: string,
  ) {
    // A refused key is as final for a script as an unreachable API: nothing it asks will be answered.
    super(
      formatApiMessage(status, reason, serverMessage, requestId),
      hint,
      status === 401 || status === 403 ? EXIT_UNREACHABLE : EXIT_ERROR,
    );
  }

  /** Worth asking again: the service is busy or briefly without Temporal or its database. */
  get transient(): boolean {
    return this.status === 429 || this.status >= 500;
  }

  /** A 404 for a route the server does not have (as opposed to a loop or record it does not have). */
  get routeNotFound(): boolean {
    return this.status === 404 && this.serverMessage.startsWith('no route ');
  }
}

export interface ApiAnswer<T> {
  status: number;
  body: T;
  /** The answer's headers, for the plain-text routes that say more in them (the diff's iteration). */
  headers?: Headers;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** 'text' for the plain-text routes (evidence logs, patches). */
  as?: 'json' | 'text';
  /** For a request known to take long (smoke tests); the client's own timeout otherwise. */
  timeoutMs?: number;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  get<T>(path: string, options: Omit<RequestOptions, 'body'> = {}): Promise<ApiAnswer<T>> {
    return this.request<T>('GET', path, options);
  }

  post<T>(path: string, body: unknown, options: Omit<RequestOptions, 'body'> = {}): Promise<ApiAnswer<T>> {
    return this.request<T>('POST', path, { ...options, body });
  }

  /** The address of an API path, e.g. to print the URL of a loop. */
  url(path: string, query: RequestOptions['query'] = {}): string {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer<T>> {
    const url = this.url(path, options.query);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: 'application/json',
      ...options.headers,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw this.connectionError(error, options.timeoutMs ?? this.timeoutMs);
    }
    if (!response.ok) throw apiError(response, text);
    if (options.as === 'text') return { status: response.status, body: text as T, headers: response.headers };
    try {
      return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
    } catch {
      throw new CliError(
        `the API at ${this.baseUrl} answered ${method} ${path} with something that is not JSON: ${excerpt(text)}`,
      );
    }
  }

  /**
   * GET `path` as a stream of server-sent events: the body's text as it arrives. Aborting `signal` ends
   * it; with a ConnectionError as the reason, that is the error thrown.
   */
  async *textStream(path: string, headers: Record<string, string>, signal: AbortSignal): AsyncGenerator<string> {
    const url = this.url(path);
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${this.apiKey}`, accept: 'text/event-stream', ...headers },
        signal,
      });
    } catch (error) {
      throw this.streamError(error, signal);
    }
    if (!response.ok) throw apiError(response, await response.text().catch(() => ''));
    if (!response.body) throw new ConnectionError(`the API at ${this.baseUrl} answered ${path} without a body`);
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) yield decoder.decode(chunk, { stream: true });
    } catch (error) {
      throw this.streamError(error, signal);
    }
  }

  private streamError(error: unknown, signal: AbortSignal): CliError {
    if (signal.aborted && signal.reason instanceof CliError) return signal.reason;
    return this.connectionError(error, this.timeoutMs);
  }

  private connectionError(error: unknown, timeoutMs: number): ConnectionError {
    const hint = `is the service running? Set ${URL_VARIABLE} (or "url" in the config file) to its address`;
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
      return new ConnectionError(
        `the API at ${this.baseUrl} did not answer within ${Math.round(timeoutMs / 1000)} s`,
        hint,
      );
    }
    const code = errorCode(error);
    const why = code ? ` (${CONNECTION_CODES[code] ?? code})` : error instanceof Error ? `: ${error.message}` : '';
    return new ConnectionError(`cannot reach the API at ${this.baseUrl}${why}`, hint);
  }
}

const CONNECTION_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_ABORTED: 'connection closed',
};

/** fetch failures wrap the socket error in `cause` (an AggregateError when several addresses were tried). */
function errorCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'ERR_INVALID_ARG_TYPE') return code;
    const nested = (current as { errors?: unknown[] }).errors;
    if (Array.isArray(nested) && nested.length) {
      current = nested[0];
      continue;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function apiError(response: Response, text: string): ApiError {
  const body = parseErrorBody(text);
  const reason = typeof body?.error === 'string' ? body.error : response.statusText || 'Error';
  const message = typeof body?.message === 'string' ? body.message : excerpt(text) || '(no message)';
  const requestId = typeof body?.requestId === 'string' ? body.requestId : null;
  const hint =
    response.status === 401
      ? `check the API key (${KEY_VARIABLE}, or "apiKey" in the config file)`
      : response.status === 429 || response.status === 503
        ? `try again${response.headers.get('retry-after') ? ` in ${response.headers.get('retry-after')} s` : ' later'}`
        : undefined;
  return new ApiError(response.status, reason, message, requestId, hint);
}

type ErrorBody = { error?: unknown; message?: unknown; requestId?: unknown } | null;

function parseErrorBody(text: string): ErrorBody {
  try {
    const body: unknown = JSON.parse(text);
    return body !== null && typeof body === 'object' ? (body as ErrorBody) : null;
  } catch {
    return null;
  }
}

/**
 * The server's message, one validation problem per line: a 400 lists each invalid field as
 * `body.contract.objective: …` separated by "; ".
 */
function formatApiMessage(status: number, reason: string, message: string, requestId: string | null): string {
  const problems = status === 400 ? message.split(/; (?=[\w.[\]-]+: )/) : [message];
  const where = `(HTTP ${status} ${reason}${requestId ? `, request ${requestId}` : ''})`;
  return problems.length > 1
    ? `the API refused the request ${where}:\n${problems.map((p) => `  - ${p}`).join('\n')}`
    : `${problems[0]} ${where}`;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
